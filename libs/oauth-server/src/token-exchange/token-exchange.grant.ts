import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { assertNever, Clock, normaliseResourceUri, OAuthError, type GrantDelegation } from '@broker/domain';
import { EventLedger, tokenExchanged } from '@broker/events';
import { ExchangeLookup, sessionUsable, type ExchangeContext, type OfferedPermissionSet } from '@broker/persistence';
import { BrokerMetrics } from '@broker/telemetry';
import { TokenVault, TokenVaultError, type UsableToken } from '@broker/vault';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import type { TokenResponse } from '../token/access-token-issuer';
import type { GrantStrategy, TokenRequestContext } from '../token/grant-strategy';
import { required, type TokenForm } from '../token/token-form';
import { ImpersonationExchange } from '../impersonation/impersonation.exchange';
import { ACCESS_TOKEN_TYPE, JWT_BEARER, TOKEN_EXCHANGE } from './token-types';
import { GatewayCredentials, GatewayCredentialsRefused, type SubjectIdentity } from './gateway-credentials';
import { AuthorizationRequestOffers } from './authorization-request-offers';

/** An event's `resource` is cut here: the form's value, bounded by the body limit only, is the caller's text. */
const MAX_RESOURCE_CHARS = 512;

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 512) : null;
}

/**
 * RFC 8693 token exchange for gateways (docs/oauth2.md): the hot
 * path. Each step of the spec's processing order is one function failing with exactly the
 * error of the table. Nothing is loaded per request that could be prepared once: trust
 * anchor keys and verified tokens are cached, CEL is compiled at boot, and the resource,
 * grant and session are read in one indexed query.
 */
@Injectable()
export class TokenExchangeGrant implements GrantStrategy {
  readonly grantType = TOKEN_EXCHANGE;
  private readonly publicUrl: string;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly gateway: GatewayCredentials,
    private readonly impersonation: ImpersonationExchange,
    private readonly lookup: ExchangeLookup,
    private readonly vault: TokenVault,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly events: EventLedger,
    private readonly metrics: BrokerMetrics,
    private readonly offers: AuthorizationRequestOffers,
  ) {
    this.publicUrl = config.server.enduser.public_url;
  }

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    // Impersonation is decided first (before the resource requirement), at this one dispatch point.
    // Only what the broker signs itself can be bound to a DPoP key (RFC 9449 §5): a third party's token from the vault
    // is returned as its provider issued it, whatever proof came with the request (docs/oauth2.md "DPoP").
    if (this.impersonation.activates(form)) return this.impersonation.handle(form, context.dpop);
    const facts: ExchangeFacts = {
      principal: null,
      agent_id: null,
      service_id: null,
      resource: form.get('resource') ?? null,
    };
    let gatewayId: string | null = null;
    let authenticated = false;
    try {
      const assertion = await this.authenticateGateway(form);
      const subject = await this.verifySubjectToken(form);
      const identity = this.extractIdentities(subject);
      this.assertDistinctParties(form, assertion, identity);
      // Only now is the gateway authenticated: a person's token never becomes the actor of an event.
      gatewayId = stringOrNull(assertion.sub);
      authenticated = true;
      const { principal, agentId } = identity;
      facts.principal = principal;
      facts.agent_id = agentId;
      this.assertAuthorized(assertion);
      const context = await this.resolveService(form, principal, agentId);
      facts.service_id = context.serviceId;
      this.assertNotSuspended(context);
      let delegations: GrantDelegation[];
      let token: UsableToken;
      try {
        delegations = this.requireActiveGrant(context);
        const missing = this.undelegatedScopes(delegations, form.get('scope'));
        if (missing !== undefined) await this.requireDelegatedScopes(context, agentId, missing);
        token = await this.usableToken(context, principal);
      } catch (refusal) {
        throw await this.withAuthorizationRequest(refusal, context, principal, agentId, gatewayId, form.get('scope'));
      }
      this.audit.record('token_exchange', {
        principal: facts.principal,
        agent_id: facts.agent_id,
        service_id: facts.service_id,
        resource: facts.resource,
        outcome: 'issued',
        oauth_error: null,
      });
      this.recordEvent(gatewayId, facts, null);
      return this.response(token, delegations, form.get('scope'));
    } catch (thrown) {
      // Steps 1-3 throw GatewayCredentialsRefused: here it becomes the exchange's OAuth error.
      const error = thrown instanceof GatewayCredentialsRefused ? TokenExchangeGrant.toOAuth(thrown) : thrown;
      const code = error instanceof OAuthError ? error.code : 'server_error';
      this.audit.record('token_exchange', {
        principal: facts.principal,
        agent_id: facts.agent_id,
        service_id: facts.service_id,
        resource: facts.resource,
        outcome: 'refused',
        oauth_error: code,
      });
      // docs/events.md: only an authenticated gateway's refusal is an event; the rest is counted.
      if (authenticated) this.recordEvent(gatewayId, facts, code);
      else this.metrics.unauthenticatedTokenRequest('token_exchange', code);
      throw error;
    }
  }

  /** A refused request still leaves its one audit record (impersonation or exchange). */
  refusedBeforeHandling(form: TokenForm, error: OAuthError): void {
    if (this.impersonation.activates(form)) {
      this.impersonation.recordRefusal(form, error, 'repeated_parameter');
      return;
    }
    const facts = { principal: null, agent_id: null, service_id: null, resource: form.get('resource') ?? null };
    this.audit.record('token_exchange', { ...facts, outcome: 'refused', oauth_error: error.code });
    // Refused before the client assertion was read: nobody authenticated, so no ledger event.
    this.metrics.unauthenticatedTokenRequest('token_exchange', error.code);
  }

  /**
   * The exchange's `token.exchanged` event, queued (the hot path never waits for
   * the ledger): who asked (the gateway's `sub`), for whom, which service and resource, and
   * the OAuth error code of a refusal; never a token or an assertion. Only for a request
   * whose gateway authenticated: one refused before that records no event (a flood of them
   * would fill the ledger and the webhook outbox) and is counted in
   * `broker_token_requests_unauthenticated_total` instead.
   */
  private recordEvent(gatewayId: string | null, facts: Readonly<ExchangeFacts>, oauthError: string | null): void {
    this.events.enqueue(
      tokenExchanged(
        gatewayId,
        {
          principal: facts.principal ?? null,
          agentId: facts.agent_id ?? null,
          serviceId: facts.service_id ?? null,
          resource: facts.resource?.slice(0, MAX_RESOURCE_CHARS) ?? null,
        },
        oauthError,
      ),
    );
  }

  /** Step 1: the gateway's client assertion (RFC 7523) against the trust anchor → else 401 invalid_client. */
  private authenticateGateway(form: TokenForm): Promise<JWTPayload> {
    const assertion = required(form, 'client_assertion');
    if (form.get('client_assertion_type') !== JWT_BEARER)
      throw new OAuthError('invalid_request', `client_assertion_type must be ${JWT_BEARER}`);
    return this.gateway.verifyAssertion(assertion);
  }

  /** Step 2: the user's subject token, verified by the same anchor → else 400 invalid_request. */
  private verifySubjectToken(form: TokenForm): Promise<JWTPayload> {
    const token = required(form, 'subject_token');
    if (form.get('subject_token_type') !== ACCESS_TOKEN_TYPE)
      throw new OAuthError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    return this.gateway.verifySubject(token);
  }

  /** Step 2 (cont.): principal and agent id by the configured expressions → else invalid_request. */
  private extractIdentities(subject: JWTPayload): SubjectIdentity {
    return this.gateway.identify(subject);
  }

  /**
   * Step 2 (cont.): the gateway and the person are two parties, whatever the authorization
   * expression admits: an assertion that is the subject token or speaks for its principal
   * does not authenticate a gateway → 401 invalid_client.
   */
  private assertDistinctParties(form: TokenForm, assertion: JWTPayload, identity: SubjectIdentity): void {
    this.gateway.assertDistinctParties(
      required(form, 'client_assertion'),
      assertion,
      required(form, 'subject_token'),
      identity,
    );
  }

  /** Step 3: the authorization expression over the client assertion's claims → else 403 access_denied. */
  private assertAuthorized(assertion: JWTPayload): void {
    this.gateway.assertAuthorized(assertion);
  }

  /** The exchange's errors for refused gateway credentials (docs/oauth2.md, "Token exchange for gateways"). */
  private static toOAuth(refusal: GatewayCredentialsRefused): OAuthError {
    switch (refusal.refusal) {
      case 'assertion_invalid':
        return new OAuthError('invalid_client', refusal.message);
      case 'subject_invalid':
      case 'identity_missing':
        return new OAuthError('invalid_request', refusal.message);
      case 'not_authorized':
        return new OAuthError('access_denied', 'the gateway is not authorized to exchange tokens');
      default:
        return assertNever(refusal.refusal, 'gateway refusal');
    }
  }

  /**
   * Step 4: the service owning `resource` (normal form, exact match) → invalid_request /
   * invalid_target. Its grant and session are read in the same round trip (steps 5-6).
   */
  private async resolveService(form: TokenForm, principal: string, agentId: string): Promise<ExchangeContext> {
    const resource = normaliseResourceUri(required(form, 'resource'));
    if (resource === undefined) throw new OAuthError('invalid_request', 'resource must be an absolute http(s) URI');
    const context = await this.lookup.contextFor(resource, principal, agentId, this.clock.now());
    // RFC 8693 §2.2.2: invalid_target when no service owns the resource.
    if (context === undefined) throw new OAuthError('invalid_target', 'no service is registered for this resource');
    return context;
  }

  /**
   * Step 4 (cont.): the agent is not suspended (read with the grant: no round trip of its own)
   * → else 403 access_denied, never with an `authorization_request`: nothing the person could
   * allow would help (docs/admin-api.md "Suspending an agent").
   */
  private assertNotSuspended(context: ExchangeContext): void {
    if (context.agentSuspended) throw new OAuthError('access_denied', 'the agent is suspended by an administrator');
  }

  /** Step 5: an active grant of the principal for the agent that delegates the service → else 403 access_denied. */
  private requireActiveGrant(context: ExchangeContext): GrantDelegation[] {
    if (context.delegations.length === 0)
      throw new OAuthError('access_denied', 'no active grant delegates this service to the agent');
    return context.delegations;
  }

  /**
   * Step 5 (cont.): the requested scopes (`scope`, space-separated) the grant does not
   * delegate for the service; undefined when it delegates them all (or none was asked),
   * which costs only the comparison on the success path.
   */
  private undelegatedScopes(delegations: readonly GrantDelegation[], scope: string | undefined): string[] | undefined {
    if (scope === undefined || scope.trim() === '') return undefined;
    const requested = scope.split(' ').filter((s) => s !== '');
    const missing = requested.filter((s) => !delegations.some((d) => d.scopes.includes(s)));
    return missing.length === 0 ? undefined : missing;
  }

  /**
   * Step 5 (cont.): scopes the grant lacks are refused only when a permission set of the agent
   * offers them for the service, so a person could allow them; scopes nobody could grant are
   * not checked (docs/authorization-requests.md, "Decisions").
   */
  private async requireDelegatedScopes(
    context: ExchangeContext,
    agentId: string,
    missing: readonly string[],
  ): Promise<void> {
    const offered = await this.offers.offeredPermissionSets(agentId, context.serviceId);
    if (missing.some((scope) => offered.some((set) => set.scopes.includes(scope))))
      throw new ScopesNotDelegated(offered);
  }

  /**
   * A refusal of steps 5-6 with the link the person can act on (`authorization_request`),
   * when the feature is on and something could be allowed; any other failure unchanged.
   */
  private async withAuthorizationRequest(
    thrown: unknown,
    context: ExchangeContext,
    principal: string,
    agentId: string,
    gateway: string | null,
    scope: string | undefined,
  ): Promise<unknown> {
    const error = thrown instanceof ScopesNotDelegated ? thrown.error : thrown;
    if (!(error instanceof OAuthError) || !this.offers.active) return error;
    let needsGrant: boolean;
    let needsConnection: boolean;
    if (error.code === 'access_denied') {
      needsGrant = true;
      needsConnection = !sessionUsable(context.session, this.clock.nowMs());
    } else if (error.code === 'invalid_grant') {
      needsGrant = false;
      needsConnection = true;
    } else return error;
    return this.offers.offer({
      error,
      principal,
      agentId,
      serviceId: context.serviceId,
      requestedScopes: scope === undefined ? [] : scope.split(' ').filter((s) => s !== ''),
      needsGrant,
      needsConnection,
      gateway,
      ...(thrown instanceof ScopesNotDelegated ? { offered: thrown.offered } : {}),
    });
  }

  /** Step 6: the stored third-party token, refreshed when needed (single-flight). */
  private async usableToken(context: ExchangeContext, principal: string): Promise<UsableToken> {
    try {
      return await this.vault.usableTokenOf(context.session, principal, context.serviceId);
    } catch (error) {
      if (error instanceof TokenVaultError && error.code !== 'refresh_failed') {
        throw new OAuthError(
          'invalid_grant',
          'the user has no usable session with the service: reconnect it',
          `${this.publicUrl}/api/third-party/${context.serviceId}/oauth2/authorize`,
        );
      }
      throw new OAuthError('server_error', 'the stored token could not be refreshed');
    }
  }

  /** The answer (docs/oauth2.md, "Token exchange for gateways"). */
  private response(
    token: UsableToken,
    delegations: readonly GrantDelegation[],
    requestedScope: string | undefined,
  ): TokenResponse {
    const scope = token.scopes.join(' ');
    const sets: Record<string, string[]> = {};
    for (const d of delegations) (sets[d.permissionSetId] ??= []).push(d.serviceId);
    // Built in the answer's member order (optional members in place), without intermediate objects.
    const answer: Mutable<TokenResponse> = {
      access_token: token.accessToken,
      token_type: token.tokenType,
      issued_token_type: ACCESS_TOKEN_TYPE,
    };
    if (token.expiresAt !== null)
      answer.expires_in = Math.max(0, Math.floor((token.expiresAt.getTime() - this.clock.nowMs()) / 1000));
    if (scope !== '' && scope !== (requestedScope ?? '')) answer.scope = scope;
    answer.granted_permission_sets = sets;
    return answer;
  }
}

/** The grant lacks requested scopes a permission set of the agent offers (carries what was read). */
class ScopesNotDelegated extends Error {
  readonly error = new OAuthError('access_denied', 'the grant does not delegate the requested scopes');

  constructor(readonly offered: readonly OfferedPermissionSet[]) {
    super('the grant does not delegate the requested scopes');
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What an exchange's audit record and event say about it, filled in step by step. */
interface ExchangeFacts {
  principal: string | null;
  agent_id: string | null;
  service_id: string | null;
  readonly resource: string | null;
}
