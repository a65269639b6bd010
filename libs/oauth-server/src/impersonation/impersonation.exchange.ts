import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, OFFLINE_SCOPES, scopesAllowedFor, isUuidShaped, type Agent } from '@broker/domain';
import { EventLedger, impersonationDecided } from '@broker/events';
import { AgentRepository, GrantRepository } from '@broker/persistence';
import { BrokerMetrics } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import { DpopProofs } from '../dpop/dpop-proofs';
import { AccessTokenIssuer, type TokenResponse } from '../token/access-token-issuer';
import { parseScope } from '../token/scopes';
import type { TokenForm } from '../token/token-form';
import { ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE, TOKEN_EXCHANGE } from '../token-exchange/token-types';
import { decisionRecord, stringClaim, type DecisionFacts, type Identities } from './impersonation-decision-record';
import { ImpersonationRefusal as Refusal } from './impersonation-refusal';
import { isUnderPrefix, parseImpersonationRequest } from './impersonation-request';
import { ImpersonationRuleMatcher, refusedAfterClientVerified, type RuleMatch } from './impersonation-rule-matcher';
import { readImpersonationSettings, type ImpersonationSettings } from './impersonation-rules';

/**
 * User impersonation on `POST /oauth2/token` (local mode
 * only): a privileged client, an actor and a subject prove themselves under the first
 * matching rule; the subject must have an active delegation to the target agent; the
 * broker signs an access token for the subject with `act` naming the actor. In pieces: the
 * request parser (`parseImpersonationRequest`), the rule matcher (`ImpersonationRuleMatcher`,
 * verifiers built at boot) and this decision, whose audit record is built from the facts each
 * step established (`decisionRecord`); every expression is compiled at boot
 * (`readImpersonationSettings`).
 */
@Injectable()
export class ImpersonationExchange {
  private readonly settings: ImpersonationSettings;
  private readonly local: boolean;
  private readonly consentUiUrl: string;
  private readonly brokerIssuer: string;
  private readonly matcher: ImpersonationRuleMatcher;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly agents: AgentRepository,
    private readonly grants: GrantRepository,
    private readonly tokens: AccessTokenIssuer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly metrics: BrokerMetrics,
    private readonly events: EventLedger,
    private readonly dpop: DpopProofs,
  ) {
    this.brokerIssuer = tokens.issuer;
    this.settings = readImpersonationSettings(config, this.brokerIssuer);
    this.local = config.oauth2_authorization_server.mode === 'local';
    this.consentUiUrl = config.server.enduser.consent_ui_url;
    this.matcher = new ImpersonationRuleMatcher(this.settings.rules, this.brokerIssuer, clock, metrics);
  }

  /**
   * Whether the request asks for impersonation, decided before the third-party `resource`
   * requirement. Local mode with impersonation configured: an `audience` under the
   * configured prefix, or a request shaped like impersonation (an actor token and a
   * JWT-typed subject, no `resource`) whatever its audience, so that a bare suffix or a
   * foreign audience is impersonation's `invalid_request`,
   * not a third-party exchange's `invalid_client`. Other modes (where impersonation cannot
   * be configured): any impersonation-shaped request (an actor token, a JWT-typed
   * subject, or an audience without a resource) is one, to be refused.
   */
  activates(form: TokenForm): boolean {
    const audience = form.get('audience');
    if (!this.local)
      return (
        form.has('actor_token') ||
        form.get('subject_token_type') === JWT_TOKEN_TYPE ||
        (audience !== undefined && !form.has('resource'))
      );
    const prefix = this.settings.audiencePrefix;
    if (prefix === undefined) return false;
    if (audience !== undefined && isUnderPrefix(audience, prefix)) return true;
    return form.has('actor_token') && form.get('subject_token_type') === JWT_TOKEN_TYPE && !form.has('resource');
  }

  /** The decision record of a request refused before `handle` (a repeated parameter): no client authenticated, so no event. */
  recordRefusal(form: TokenForm, error: OAuthError, failure: string): void {
    this.audit.record(
      'impersonation_decision',
      decisionRecord(form.get('audience'), {}, { outcome: 'refused', oauthError: error.code, failure }),
    );
    this.metrics.unauthenticatedTokenRequest('impersonation', error.code);
  }

  /** `dpopProof`: the request's `DPoP` header; a valid proof binds the token to its key (RFC 9449 §5). */
  async handle(form: TokenForm, dpopProof?: string | string[]): Promise<TokenResponse> {
    // Each step's result, recorded in the decision whether it issues or refuses.
    const facts: { -readonly [K in keyof DecisionFacts]: DecisionFacts[K] } = {};
    try {
      // Proxy and hybrid refuse impersonation, never forwarding it upstream.
      if (!this.local) throw new Refusal('invalid_target', 'impersonation is available only in local mode', 'mode');
      const request = parseImpersonationRequest(form, this.settings.audiencePrefix ?? '');
      facts.credentials = request.credentials;
      const target = (facts.target = await this.resolveTarget(request.targetSuffix));
      const match = (facts.match = await this.matcher.firstMatch(request.credentials));
      const identities = (facts.identities = this.identities(match));
      const scopes = this.grantedScopes(target, request.scope);
      // docs/admin-api.md "Suspending an agent": no token names a suspended agent; the person's grant is kept for its resumption.
      if (target.suspension !== null)
        throw new Refusal('access_denied', 'the agent is suspended by an administrator', 'agent_suspended');
      await this.requireDelegation(identities.subject, target);
      // The target agent's policy applies: tokens for an agent registered with dpop_bound_access_tokens are always bound.
      const jkt = await this.dpop.forTokenRequest(dpopProof, target.dpopBoundAccessTokens);
      const issued = await this.tokens.issue({
        agent: target,
        principal: identities.subject,
        scopes,
        grantType: TOKEN_EXCHANGE,
        act: { iss: stringClaim(match.actor.iss) ?? '', sub: identities.actor },
        email: identities.email,
        jkt,
      });
      this.audit.record('impersonation_decision', decisionRecord(form.get('audience'), facts, { outcome: 'issued' }));
      this.recordEvent(form, facts, null);
      this.metrics.impersonationDecision('allowed');
      // RFC 8693 §2.2.1: issued_token_type is required; scope only when there is one.
      const { access_token, token_type, expires_in, scope } = issued;
      return {
        access_token,
        token_type,
        issued_token_type: ACCESS_TOKEN_TYPE,
        expires_in,
        ...(scope !== undefined && scope !== '' ? { scope } : {}),
      };
    } catch (error) {
      const code = error instanceof OAuthError ? error.code : 'server_error';
      this.metrics.impersonationDecision(code === 'server_error' ? 'error' : 'denied');
      this.audit.record(
        'impersonation_decision',
        decisionRecord(form.get('audience'), facts, {
          outcome: 'refused',
          oauthError: code,
          failure: error instanceof Refusal ? error.failure : code,
        }),
      );
      // docs/events.md: only a refusal after a rule verified the client assertion is an event; the rest is counted.
      if (facts.match !== undefined || refusedAfterClientVerified(error)) this.recordEvent(form, facts, code);
      else this.metrics.unauthenticatedTokenRequest('impersonation', code);
      throw error;
    }
  }

  /**
   * The decision's `impersonation.decided` event, queued (the token endpoint's hot
   * path): the actor (by the rule's expression) acting as the subject towards the target
   * agent, and the OAuth error code of a refusal; never a token or a claim set. Only once a
   * rule verified the client assertion: a request refused before (a malformed request, an
   * unknown target, a client no rule trusts) is counted in
   * `broker_token_requests_unauthenticated_total` instead.
   */
  private recordEvent(form: TokenForm, facts: DecisionFacts, oauthError: string | null): void {
    this.events.enqueue(
      impersonationDecided(
        {
          actor: facts.identities?.actor ?? null,
          subject: facts.identities?.subject ?? null,
          agentId: facts.target?.id ?? null,
          audience: stringClaim(form.get('audience')),
        },
        oauthError,
      ),
    );
  }

  /** The registered agent the suffix names (UUID or canonical_id) → else invalid_target. */
  private async resolveTarget(suffix: string): Promise<Agent> {
    const agent = isUuidShaped(suffix)
      ? await this.agents.findById(suffix)
      : await this.agents.findByCanonicalId(suffix);
    if (agent === undefined)
      throw new Refusal('invalid_target', 'no agent is registered for this audience', 'unknown_target');
    return agent;
  }

  /** Subject and actor identities by the rule's expressions; the email when the rule binds it. */
  private identities(match: RuleMatch): Identities {
    const evaluate = (run: () => unknown): string | undefined => {
      try {
        const value = run();
        return typeof value === 'string' && value.trim() !== '' && value.length <= 200 ? value.trim() : undefined;
      } catch {
        return undefined;
      }
    };
    const subject = evaluate(() => match.rule.subject.principalOf({ subject_token: match.subject }));
    const actor = evaluate(() => match.rule.actor.principalOf({ actor_token: match.actor }));
    if (subject === undefined)
      throw new Refusal(
        'invalid_request',
        'the subject token has no usable principal claim',
        'subject_identity_missing',
      );
    if (actor === undefined || stringClaim(match.actor.iss) === null)
      throw new Refusal('invalid_request', 'the actor token has no usable identity', 'actor_identity_missing');
    const emailOf = match.rule.subject.emailOf;
    const email = emailOf === undefined ? undefined : evaluate(() => emailOf({ subject_token: match.subject }));
    return { subject, actor, email };
  }

  /** Each non-reserved scope must be allowed for the target (empty list: all); never named in the error. */
  private grantedScopes(target: Agent, requested: string | undefined): string[] {
    const scopes = parseScope(requested);
    // Offline access is always permitted to impersonation, whatever the target's allowed_scopes (docs/oauth2.md).
    if (!scopesAllowedFor(target, scopes, { reserved: OFFLINE_SCOPES }))
      throw new Refusal('invalid_scope', 'a requested scope is not allowed for the target agent', 'scope_not_allowed');
    return scopes;
  }

  /** An active delegation of the subject to the target → else 403 with the consent page; a failing lookup is 500. */
  private async requireDelegation(subject: string, target: Agent): Promise<void> {
    let active: boolean;
    try {
      active = await this.grants.hasActive(subject, target.id, this.clock.now());
    } catch {
      throw new Refusal('server_error', 'the delegation could not be checked', 'delegation_lookup_failed');
    }
    // Missing and expired are indistinguishable.
    if (!active)
      throw new Refusal(
        'access_denied',
        'the user has not delegated to the target agent',
        'no_delegation',
        `${this.consentUiUrl}/agents/${target.id}`,
      );
  }
}
