import { AuditLog, type AuditValue } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { assertNever, canonicalIdProblem, Clock, isCanonicalUuid, isUuidShaped, OAuthError, OFFLINE_SCOPES, scopesAllowedFor, type Agent, type OAuthErrorCode } from '@broker/domain';
import { AgentRepository, GrantRepository } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import { CLOCK_TOLERANCE_SECONDS, JwtRejected, JwtVerifier } from '../jwt/jwt-verifier';
import { RemoteKeySet } from '../jwt/remote-key-set';
import { AccessTokenIssuer, type TokenResponse } from '../token/access-token-issuer';
import { parseScope } from '../token/scopes';
import type { TokenForm } from '../token/token-form';
import { ACCESS_TOKEN_TYPE, JWT_BEARER, JWT_TOKEN_TYPE, TOKEN_EXCHANGE } from '../token-exchange/token-types';
import { readImpersonationSettings, type ImpersonationRule, type ImpersonationSettings, type Role } from './impersonation-rules';

/** A credential as presented: its bytes and what its unverified header and claims say. */
interface Presented {
  readonly jwt: string;
  readonly alg: string;
  readonly claims: JWTPayload;
  readonly unsigned: boolean;
}

/** Why one rule did not match; the request's error is the highest in precedence over all rules. */
type RuleMiss = 'access_denied' | 'invalid_request' | 'invalid_client';
const PRECEDENCE: readonly RuleMiss[] = ['access_denied', 'invalid_request', 'invalid_client'];

interface RuleMatch {
  readonly rule: ImpersonationRule;
  readonly client: JWTPayload;
  readonly actor: JWTPayload;
  readonly subject: JWTPayload;
}

/** The decision being made, recorded once as `impersonation_decision` (no credential ever). */
type Decision = Record<string, AuditValue>;

class Refusal extends OAuthError {
  constructor(
    code: OAuthErrorCode,
    description: string,
    readonly failure: string,
    errorUri?: string,
  ) {
    super(code, description, errorUri);
  }
}

/**
 * User impersonation on `POST /oauth2/token` (SPEC.md "User impersonation", local mode
 * only): a privileged client, an actor and a subject prove themselves under the first
 * matching rule; the subject must have an active delegation to the target agent; the
 * broker signs an access token for the subject with `act` naming the actor. Trusted
 * issuers' keys are cached per JWKS URI and verified tokens remembered until `exp`
 * (`JwtVerifier`); every expression is compiled at boot (`readImpersonationSettings`).
 */
@Injectable()
export class ImpersonationExchange {
  private readonly settings: ImpersonationSettings;
  private readonly local: boolean;
  private readonly consentUiUrl: string;
  private readonly brokerIssuer: string;
  /** One verifier per (issuer, JWKS URI), one key set per JWKS URI. */
  private readonly verifiers = new Map<string, JwtVerifier>();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly agents: AgentRepository,
    private readonly grants: GrantRepository,
    private readonly tokens: AccessTokenIssuer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {
    this.brokerIssuer = tokens.issuer;
    this.settings = readImpersonationSettings(config, this.brokerIssuer);
    this.local = config.oauth2_authorization_server.mode === 'local';
    this.consentUiUrl = config.server.enduser.consent_ui_url;
    const keySets = new Map<string, RemoteKeySet>();
    for (const rule of this.settings.rules) {
      for (const issuer of rule.issuers) {
        const keys = keySets.get(issuer.jwksUri) ?? new RemoteKeySet(issuer.jwksUri, clock);
        keySets.set(issuer.jwksUri, keys);
        const id = `${issuer.issuer} ${issuer.jwksUri}`;
        if (!this.verifiers.has(id)) this.verifiers.set(id, new JwtVerifier(issuer.issuer, keys, clock));
      }
    }
  }

  /**
   * Whether the request asks for impersonation, decided before the third-party `resource`
   * requirement. Local mode with impersonation configured: an `audience` under the
   * configured prefix, or a request shaped like impersonation (an actor token and a
   * JWT-typed subject, no `resource`) whatever its audience, so that a bare suffix or a
   * foreign audience is impersonation's `invalid_request` (SPEC.md impersonation errors),
   * not a third-party exchange's `invalid_client`. Other modes (where impersonation cannot
   * be configured): any impersonation-shaped request (an actor token, a JWT-typed
   * subject, or an audience without a resource) is one, to be refused.
   */
  activates(form: TokenForm): boolean {
    const audience = form.get('audience');
    if (!this.local) return form.has('actor_token') || form.get('subject_token_type') === JWT_TOKEN_TYPE || (audience !== undefined && !form.has('resource'));
    const prefix = this.settings.audiencePrefix;
    if (prefix === undefined) return false;
    if (audience !== undefined && isUnderPrefix(audience, prefix)) return true;
    return form.has('actor_token') && form.get('subject_token_type') === JWT_TOKEN_TYPE && !form.has('resource');
  }

  /** The decision record of a request refused before `handle` (a repeated parameter). */
  recordRefusal(form: TokenForm, error: OAuthError, failure: string): void {
    this.audit.record('impersonation_decision', { ...this.undecided(form), outcome: 'refused', oauth_error: error.code, failure });
  }

  private undecided(form: TokenForm): Decision {
    return { routing_audience: form.get('audience') ?? null, target_agent_id: null, rule: null, client_issuer: null, actor_issuer: null, subject_issuer: null, roles: [], client_id: null, actor: null, subject: null };
  }

  async handle(form: TokenForm): Promise<TokenResponse> {
    const decision = this.undecided(form);
    try {
      // API.md: proxy and hybrid refuse impersonation, never forwarding it upstream.
      if (!this.local) throw new Refusal('invalid_target', 'impersonation is available only in local mode', 'mode');
      const suffix = this.targetSuffix(form.get('audience'));
      this.checkRequestShape(form);
      const credentials = this.presentedCredentials(form);
      decision.roles = ['client_assertion', 'actor', 'subject'];
      decision.client_issuer = stringClaim(credentials.client.claims.iss);
      decision.actor_issuer = stringClaim(credentials.actor.claims.iss);
      decision.subject_issuer = stringClaim(credentials.subject.claims.iss);
      const target = await this.resolveTarget(suffix);
      decision.target_agent_id = target.id;
      const match = await this.firstMatchingRule(credentials);
      decision.rule = match.rule.name;
      decision.client_id = stringClaim(match.client.sub);
      const { subject, actor, email } = this.identities(match);
      decision.subject = subject;
      decision.actor = actor;
      decision.verification = match.rule.subject.verification;
      const scopes = this.grantedScopes(target, form.get('scope'));
      await this.requireDelegation(subject, target);
      const issued = await this.tokens.issue({ agent: target, principal: subject, scopes, grantType: TOKEN_EXCHANGE, act: { iss: stringClaim(match.actor.iss) ?? '', sub: actor }, email });
      this.audit.record('impersonation_decision', { ...decision, outcome: 'issued', oauth_error: null, failure: null });
      const response: Record<string, unknown> = { access_token: issued.access_token, token_type: issued.token_type, issued_token_type: ACCESS_TOKEN_TYPE, expires_in: issued.expires_in };
      if (issued.scope !== undefined && issued.scope !== '') response.scope = issued.scope;
      return response as unknown as TokenResponse;
    } catch (error) {
      const code = error instanceof OAuthError ? error.code : 'server_error';
      this.audit.record('impersonation_decision', { ...decision, outcome: 'refused', oauth_error: code, failure: error instanceof Refusal ? error.failure : code });
      throw error;
    }
  }

  /**
   * `<prefix>/<suffix>`: one segment, a lower-case canonical UUID or a well-formed
   * canonical_id. Every other audience is `invalid_request` (SPEC.md: bare prefix, bare
   * suffix, suffix matching neither identifier form); the description never names the
   * configured prefix.
   */
  private targetSuffix(audience: string | undefined): string {
    const prefix = this.settings.audiencePrefix ?? '';
    if (audience === undefined || audience === '') throw new Refusal('invalid_request', 'audience is required: the impersonation prefix followed by /<agent id or canonical_id>', 'audience_missing');
    if (!isUnderPrefix(audience, prefix)) {
      const bareSuffix = isUuidShaped(audience) || canonicalIdProblem(audience) === undefined;
      throw new Refusal(
        'invalid_request',
        bareSuffix ? 'the audience names an agent without the impersonation prefix' : 'the audience is not an impersonation audience',
        bareSuffix ? 'audience_bare_suffix' : 'audience_outside_prefix',
      );
    }
    const suffix = audience.slice(prefix.length + 1);
    if (audience === prefix || suffix === '') throw new Refusal('invalid_request', 'the audience names no target agent', 'audience_bare_prefix');
    if (suffix.includes('/')) throw new Refusal('invalid_request', 'the audience suffix must be one path segment', 'audience_extra_segments');
    if (isUuidShaped(suffix)) {
      if (!isCanonicalUuid(suffix)) throw new Refusal('invalid_request', 'an agent UUID in the audience must be canonical lower-case', 'audience_uuid_not_canonical');
    } else if (canonicalIdProblem(suffix) !== undefined) {
      throw new Refusal('invalid_request', 'the audience suffix is neither an agent UUID nor a canonical_id', 'audience_suffix_malformed');
    }
    return suffix;
  }

  /** No `resource`; only the access-token type may be requested. */
  private checkRequestShape(form: TokenForm): void {
    if (form.has('resource')) throw new Refusal('invalid_request', 'resource is not allowed with impersonation', 'resource_present');
    const requested = form.get('requested_token_type');
    if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE) throw new Refusal('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}`, 'requested_token_type');
    if (form.get('client_assertion_type') !== JWT_BEARER) throw new Refusal('invalid_request', `client_assertion_type must be ${JWT_BEARER}`, 'malformed_credentials');
    if (form.get('actor_token_type') !== JWT_TOKEN_TYPE) throw new Refusal('invalid_request', `actor_token_type must be ${JWT_TOKEN_TYPE}`, 'malformed_credentials');
    if (form.get('subject_token_type') !== JWT_TOKEN_TYPE) throw new Refusal('invalid_request', `subject_token_type must be ${JWT_TOKEN_TYPE}`, 'malformed_credentials');
  }

  /** The three JWTs, decoded (unverified) once; a missing or malformed one is invalid_request. */
  private presentedCredentials(form: TokenForm): { client: Presented; actor: Presented; subject: Presented } {
    const read = (field: string): Presented => {
      const jwt = form.get(field);
      if (jwt === undefined || jwt === '') throw new Refusal('invalid_request', `${field} is required`, 'malformed_credentials');
      try {
        const header = decodeProtectedHeader(jwt);
        const claims = decodeJwt(jwt);
        const alg = typeof header.alg === 'string' ? header.alg : '';
        return { jwt, alg, claims, unsigned: alg === 'none' && jwt.endsWith('.') };
      } catch {
        throw new Refusal('invalid_request', `${field} is not a well-formed JWT`, 'malformed_credentials');
      }
    };
    return { client: read('client_assertion'), actor: read('actor_token'), subject: read('subject_token') };
  }

  /** The registered agent the suffix names (UUID or canonical_id) → else invalid_target. */
  private async resolveTarget(suffix: string): Promise<Agent> {
    const agent = isUuidShaped(suffix) ? await this.agents.findById(suffix) : await this.agents.findByCanonicalId(suffix);
    if (agent === undefined) throw new Refusal('invalid_target', 'no agent is registered for this audience', 'unknown_target');
    return agent;
  }

  /**
   * Rules in order, first match: the client assertion (→ invalid_client), the actor and the
   * subject (→ invalid_request), then the predicate (→ access_denied). With no match the
   * error is the highest in precedence any rule reached: access_denied, invalid_request,
   * invalid_client (SPEC.md).
   */
  private async firstMatchingRule(credentials: { client: Presented; actor: Presented; subject: Presented }): Promise<RuleMatch> {
    const misses = new Set<RuleMiss>();
    for (const rule of this.settings.rules) {
      const client = await this.verifyRole(rule, 'client_assertion', credentials.client);
      if (client === undefined) {
        misses.add('invalid_client');
        continue;
      }
      const actor = await this.verifyRole(rule, 'actor', credentials.actor);
      const subject = rule.subject.verification === 'none' ? this.acceptUnsigned(credentials.subject) : await this.verifyRole(rule, 'subject', credentials.subject);
      if (actor === undefined || subject === undefined) {
        misses.add('invalid_request');
        continue;
      }
      let allowed: unknown;
      try {
        allowed = rule.predicate({ client_assertion: client, actor_token: actor, subject_token: subject });
      } catch {
        allowed = false;
      }
      if (allowed === true) return { rule, client, actor, subject };
      misses.add('access_denied');
    }
    const code = PRECEDENCE.find((miss) => misses.has(miss)) ?? 'invalid_client';
    switch (code) {
      case 'access_denied':
        throw new Refusal('access_denied', 'no impersonation rule permits this request', 'no_rule_permits');
      case 'invalid_request':
        throw new Refusal('invalid_request', 'the actor or subject token is not valid', 'credentials_not_valid');
      case 'invalid_client':
        throw new Refusal('invalid_client', 'the client assertion is not trusted', 'client_not_trusted');
      default:
        return assertNever(code, 'rule miss');
    }
  }

  /** A signed credential of this role under this rule: a trusted issuer for the role, its keys, audience, expiry. */
  private async verifyRole(rule: ImpersonationRule, role: Role, presented: Presented): Promise<JWTPayload | undefined> {
    // Unsigned client assertions and actor tokens are never accepted; nor an unsigned subject on a signed rule.
    if (presented.unsigned || presented.alg === 'none') return undefined;
    const issuer = rule.issuers.find((candidate) => candidate.issuer === presented.claims.iss && candidate.roles.has(role));
    if (issuer === undefined) return undefined;
    const verifier = this.verifiers.get(`${issuer.issuer} ${issuer.jwksUri}`);
    const roleRule = role === 'client_assertion' ? rule.clientAssertion : role === 'actor' ? rule.actor : rule.subject;
    // A client assertion is addressed to us (RFC 7523 §3) unless the rule names another audience.
    const audience = roleRule.expectedAudience ?? (role === 'client_assertion' ? this.brokerIssuer : undefined);
    try {
      return await verifier?.verify(presented.jwt, { purpose: `impersonation:${rule.index}:${role}`, audience: audience === undefined ? undefined : [audience], algorithms: issuer.algorithms });
    } catch (error) {
      if (error instanceof JwtRejected) return undefined;
      throw error;
    }
  }

  /** The unverified-subject profile: only an unsigned (`alg: none`) JWT, still within its `exp`/`nbf`. */
  private acceptUnsigned(presented: Presented): JWTPayload | undefined {
    if (!presented.unsigned) return undefined;
    const now = this.clock.nowMs() / 1000;
    const { exp, nbf } = presented.claims;
    if (exp !== undefined && (typeof exp !== 'number' || exp + CLOCK_TOLERANCE_SECONDS <= now)) return undefined;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf - CLOCK_TOLERANCE_SECONDS > now)) return undefined;
    return presented.claims;
  }

  /** Subject and actor identities by the rule's expressions; the email when the rule binds it. */
  private identities(match: RuleMatch): { subject: string; actor: string; email: string | undefined } {
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
    if (subject === undefined) throw new Refusal('invalid_request', 'the subject token has no usable principal claim', 'subject_identity_missing');
    if (actor === undefined || stringClaim(match.actor.iss) === null) throw new Refusal('invalid_request', 'the actor token has no usable identity', 'actor_identity_missing');
    const emailOf = match.rule.subject.emailOf;
    const email = emailOf === undefined ? undefined : evaluate(() => emailOf({ subject_token: match.subject }));
    return { subject, actor, email };
  }

  /** Each non-reserved scope must be allowed for the target (empty list: all); never named in the error. */
  private grantedScopes(target: Agent, requested: string | undefined): string[] {
    const scopes = parseScope(requested);
    // Offline access is always permitted to impersonation, whatever the target's allowed_scopes (SPEC.md "User impersonation").
    if (!scopesAllowedFor(target, scopes, { reserved: OFFLINE_SCOPES })) throw new Refusal('invalid_scope', 'a requested scope is not allowed for the target agent', 'scope_not_allowed');
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
    // Missing and expired are indistinguishable (SPEC.md).
    if (!active) throw new Refusal('access_denied', 'the user has not delegated to the target agent', 'no_delegation', `${this.consentUiUrl}/agents/${target.id}`);
  }
}

function stringClaim(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 512) : null;
}

/** `audience` is the impersonation prefix itself or lies under it (`<prefix>/...`). */
function isUnderPrefix(audience: string, prefix: string): boolean {
  return audience === prefix || audience.startsWith(`${prefix}/`);
}
