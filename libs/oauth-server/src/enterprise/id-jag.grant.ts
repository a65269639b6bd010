import { createHash } from 'node:crypto';
import { AuditLog } from '@broker/audit';
import { Clock, normalisePrincipal, OAuthError, Random, type Agent, type ProtectedResource } from '@broker/domain';
import { EventLedger, enterpriseAccessDecided } from '@broker/events';
import { EnterpriseAuthorizationRepository, ProtectedResourceRepository } from '@broker/persistence';
import { BrokerMetrics } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { DpopProofs } from '../dpop/dpop-proofs';
import { CLOCK_TOLERANCE_SECONDS, JwtRejected } from '../jwt/jwt-verifier';
import { decodeJson, JwsRefused } from '../jwt/compact-jws';
import { ResourceIndicators } from '../resource/resource-indicators';
import { AccessTokenIssuer, type TokenResponse } from '../token/access-token-issuer';
import { ClientAuthenticator } from '../token/client-authenticator';
import type { GrantStrategy, TokenRequestContext } from '../token/grant-strategy';
import { assertScopesAllowed, parseScope } from '../token/scopes';
import { required, type TokenForm } from '../token/token-form';
import { TOKEN_LIFECYCLE_SCOPE, type TokenLifecycleScope } from '../token-lifecycle/lifecycle-clients';
import { EnterpriseIssuers, type TrustedEnterpriseIssuer } from './enterprise-issuers';

/** RFC 7523 §2.1: the JWT bearer authorization grant. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** draft-ietf-oauth-identity-assertion-authz-grant §7.2, §9.3: the profile a client looks for in the metadata. */
export const ID_JAG_GRANT_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';
/** The ID-JAG's explicit type (draft-ietf-oauth-identity-assertion-authz-grant §3.1, RFC 8725 §3.11). */
const ID_JAG_TYPE = 'oauth-id-jag+jwt';

/** A refusal of the assertion itself: `invalid_grant` (RFC 7521 §4.1.1, RFC 7523 §3.1), saying which check failed. */
function invalidGrant(reason: string): OAuthError {
  return new OAuthError('invalid_grant', `the identity assertion is not acceptable: ${reason}`);
}

/**
 * When the assertion was issued at the earliest, by our clock: its `iat` less the leeway the
 * verifier grants (`CLOCK_TOLERANCE_SECONDS`), since an IdP clock that far ahead passes. A
 * revocation is judged against this, so an ID-JAG minted before it never counts as issued after
 * it; one minted within the leeway after it is refused too, and the IdP mints another a minute later.
 */
function earliestIssuedAt(iat: number): Date {
  return new Date((iat - CLOCK_TOLERANCE_SECONDS) * 1000);
}

/** A verified ID-JAG's claims this grant reads. */
interface IdJagClaims {
  readonly payload: JWTPayload;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  readonly resources: readonly string[];
  readonly scopes: readonly string[] | undefined;
  readonly jkt: string | undefined;
}

/** What the request established so far, for its event and audit record. */
interface Facts {
  agent?: Agent;
  issuer?: TrustedEnterpriseIssuer;
  principal?: string;
  resource?: string;
  scopes?: readonly string[];
  authorizationId?: string;
}

/**
 * Enterprise-managed authorization: an Identity Assertion JWT Authorization Grant (ID-JAG,
 * draft-ietf-oauth-identity-assertion-authz-grant §4.4) presented with the JWT bearer grant
 * (RFC 7523) by a confidential agent buys an access token for the person the enterprise IdP
 * names, for the MCP server (protected resource) the assertion names, without a consent page:
 * the organisation decided. Checked in this order (docs/oauth2.md "Enterprise-managed
 * authorization"): client authentication (§8.1, confidential only), the assertion (trusted
 * issuer, signature and algorithm, `typ`, `aud` exactly our issuer, lifetime), its
 * `client_id` (the authenticated agent), the resource (registered and allowed, MCP
 * enterprise-managed authorization §7.6.2), the scopes, the person, DPoP (§8.6.1), then the
 * `jti` is spent (single use on every replica) and the enterprise authorization recorded: its
 * id is the token's `sid`, which the person or an admin can revoke. No refresh token (§4.4.3).
 */
@Injectable()
export class IdJagGrant implements GrantStrategy {
  readonly grantType = JWT_BEARER_GRANT;

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly issuers: EnterpriseIssuers,
    private readonly tokens: AccessTokenIssuer,
    private readonly resourcePolicy: ResourceIndicators,
    private readonly catalog: ProtectedResourceRepository,
    private readonly authorizations: EnterpriseAuthorizationRepository,
    private readonly dpop: DpopProofs,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly events: EventLedger,
    private readonly metrics: BrokerMetrics,
    private readonly audit: AuditLog,
    @Inject(TOKEN_LIFECYCLE_SCOPE) private readonly lifecycle: TokenLifecycleScope,
  ) {}

  refusedBeforeHandling(_form: TokenForm, error: OAuthError): void {
    this.metrics.unauthenticatedTokenRequest('jwt_bearer', error.code);
  }

  async handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse> {
    const facts: Facts = {};
    let verified = false;
    try {
      const { agent } = await this.clients.authenticate(context.authorization, form, { allowPublic: false });
      facts.agent = agent;
      // Hybrid mode: an agent of the upstream authorization server has its tokens there; one of ours could be
      // neither introspected nor revoked here (RFC 6749 §5.2).
      if (!this.lifecycle.servesAgent(agent))
        throw new OAuthError('unauthorized_client', 'this client is served by the upstream authorization server');
      const assertion = required(form, 'assertion');
      const issuer = (facts.issuer = this.issuerOf(assertion));
      const claims = await this.verify(assertion, issuer);
      verified = true;
      // The person first: every later refusal is on their activity page.
      const principal = (facts.principal = this.principalOf(issuer, claims.payload));
      // §4.4.1: the assertion was issued for this very client at this authorization server.
      if (claims.payload.client_id !== agent.id) throw invalidGrant('it was issued to another client');
      const registered = await this.resourceOf(claims, form.get('resource'), agent);
      const resource = (facts.resource = registered.resourceUri);
      const scopes = (facts.scopes = this.scopesOf(claims, form.get('scope'), registered, agent));
      const jkt = await this.dpopKey(claims, context, agent);
      const now = this.clock.now();
      // One statement: the jti is spent (MCP enterprise-managed authorization §7.4.2: each assertion once, on every
      // replica, until it expires) and the authorization recorded.
      const recorded = await this.authorizations.record({
        candidateId: this.random.uuid(),
        principal,
        agentId: agent.id,
        issuer: issuer.issuer,
        resourceUri: resource,
        scopes,
        now,
        expiresAt: new Date(now.getTime() + this.tokens.ttlSeconds * 1000),
        assertionIssuedAt: earliestIssuedAt(claims.iat),
        assertionSha256: createHash('sha256').update(`id-jag\n${issuer.issuer}\n${claims.jti}`).digest(),
        spentUntil: new Date((claims.exp + CLOCK_TOLERANCE_SECONDS) * 1000),
      });
      if (recorded.outcome === 'replayed') throw invalidGrant('it was used already');
      if (recorded.outcome === 'revoked') throw invalidGrant('it was issued before this access was revoked');
      const authorizationId = (facts.authorizationId = recorded.id);
      const issued = await this.tokens.issue({
        agent,
        principal,
        scopes,
        grantType: this.grantType,
        resources: [resource],
        familyId: authorizationId,
        jkt,
      });
      this.record(facts, null);
      // §4.4.3: no refresh token; the granted resource is named with the token (§4.4.1).
      return { ...issued, resource };
    } catch (error) {
      const code = error instanceof OAuthError ? error.code : 'server_error';
      // docs/events.md: an event once the client authenticated and the assertion verified; before, a count.
      if (verified) this.record(facts, code);
      else this.metrics.unauthenticatedTokenRequest('jwt_bearer', code);
      throw error;
    }
  }

  /** The trusted issuer the assertion claims to come from (read unverified only to choose the keys). */
  private issuerOf(assertion: string): TrustedEnterpriseIssuer {
    const segments = assertion.split('.');
    if (segments.length !== 3) throw invalidGrant('it is not a signed JWT');
    let claims: Record<string, unknown>;
    try {
      claims = decodeJson(segments[1] ?? '', 'the claims');
    } catch (error) {
      throw invalidGrant(error instanceof JwsRefused ? error.code : 'it is not a signed JWT');
    }
    const issuer = this.issuers.find(claims.iss);
    if (issuer === undefined) throw invalidGrant('its issuer is not trusted');
    return issuer;
  }

  /** Signature, `iss`, `aud`, times (`JwtVerifier`), then the ID-JAG's own rules (§3.1, §4.4.1). */
  private async verify(assertion: string, issuer: TrustedEnterpriseIssuer): Promise<IdJagClaims> {
    const maxLifetime = this.issuers.maxLifetimeSeconds;
    let payload: JWTPayload;
    try {
      const verifier = await issuer.verifier();
      payload = await verifier.verify(assertion, {
        purpose: 'id_jag',
        audience: [this.tokens.issuer],
        algorithms: issuer.algorithms,
        accepts: (header, claims) => idJagProblem(header.typ, claims, maxLifetime, issuer.tenant),
      });
    } catch (error) {
      if (error instanceof JwtRejected) throw invalidGrant(error.message);
      throw error;
    }
    const cnf = payload.cnf as { jkt?: unknown } | undefined;
    const resource = payload.resource;
    return {
      payload,
      jti: payload.jti as string,
      iat: payload.iat as number,
      exp: payload.exp as number,
      resources: resource === undefined ? [] : Array.isArray(resource) ? (resource as string[]) : [resource as string],
      scopes: typeof payload.scope === 'string' ? parseScope(payload.scope) : undefined,
      jkt: typeof cnf?.jkt === 'string' ? cnf.jkt : undefined,
    };
  }

  /**
   * The one resource the token is for: named by the assertion (MCP enterprise-managed
   * authorization §5.1: the token is audience-restricted to it), registered as a protected
   * resource and allowed for the agent (§7.6.2: otherwise `invalid_grant`); a `resource`
   * parameter (RFC 8707) chooses among the assertion's, never adds one (`invalid_target`).
   */
  private async resourceOf(
    claims: IdJagClaims,
    requested: string | undefined,
    agent: Agent,
  ): Promise<ProtectedResource> {
    if (claims.resources.length === 0) throw invalidGrant('it names no resource');
    if (requested !== undefined && !claims.resources.includes(requested))
      throw new OAuthError('invalid_target', 'the resource is not one the identity assertion names');
    const resource = requested ?? (claims.resources.length === 1 ? claims.resources[0] : undefined);
    if (resource === undefined)
      throw new OAuthError('invalid_target', 'the identity assertion names several resources: request one');
    try {
      this.resourcePolicy.assertAllowed(resource, agent);
    } catch (error) {
      if (error instanceof OAuthError && error.code === 'invalid_target')
        throw invalidGrant('its resource is not allowed for this client');
      throw error;
    }
    const registered = await this.catalog.byUri(resource, this.clock.nowMs());
    if (registered === undefined) throw invalidGrant('its resource is not a registered protected resource');
    return registered;
  }

  /**
   * The assertion's scopes must all be offered by the resource (§7.6.2: `invalid_grant`); a
   * `scope` parameter may narrow them, never widen them (RFC 7521 §4.1: `invalid_scope`); the
   * result is within the agent's allowed scopes.
   */
  private scopesOf(
    claims: IdJagClaims,
    requested: string | undefined,
    registered: ProtectedResource,
    agent: Agent,
  ): readonly string[] {
    const granted = claims.scopes ?? [];
    if (!granted.every((scope) => registered.scopes.some((offered) => offered.scope === scope)))
      throw invalidGrant('it grants a scope the resource does not offer');
    const scopes = requested === undefined ? granted : parseScope(requested);
    if (!scopes.every((scope) => granted.includes(scope)))
      throw new OAuthError('invalid_scope', 'a requested scope is not granted by the identity assertion');
    assertScopesAllowed(agent, scopes);
    return scopes;
  }

  /** The broker's principal for the person the assertion names (`principal_expression`, default `id_jag.sub`). */
  private principalOf(issuer: TrustedEnterpriseIssuer, payload: JWTPayload): string {
    let value: unknown;
    try {
      value = issuer.principalOf({ id_jag: payload });
    } catch {
      throw invalidGrant('the person could not be read from it');
    }
    const checked = typeof value === 'string' ? normalisePrincipal(value) : undefined;
    if (checked?.ok !== true) throw invalidGrant('the person could not be read from it');
    return checked.value;
  }

  /** RFC 9449 with §8.6.1: a proof binds the token; an assertion bound to a key (`cnf.jkt`) needs a proof of that key. */
  private async dpopKey(claims: IdJagClaims, context: TokenRequestContext, agent: Agent): Promise<string | undefined> {
    const jkt = await this.dpop.forTokenRequest(context.dpop, agent.dpopBoundAccessTokens);
    if (claims.jkt !== undefined && jkt === undefined) throw invalidGrant('it is bound to a DPoP key: send a proof');
    if (claims.jkt !== undefined && claims.jkt !== jkt)
      throw invalidGrant('it is bound to another DPoP key than the proof');
    return jkt;
  }

  /** The `enterprise_access.decided` event (queued: the token endpoint's hot path) and the audit record; never the assertion. */
  private record(facts: Facts, oauthError: string | null): void {
    const agentId = facts.agent?.id ?? null;
    if (agentId === null || facts.issuer === undefined) return;
    this.events.enqueue(
      enterpriseAccessDecided(
        {
          agentId,
          principal: facts.principal ?? null,
          issuer: facts.issuer.issuer,
          authorizationId: facts.authorizationId ?? null,
          resource: facts.resource ?? null,
          scopes: facts.scopes ?? [],
        },
        oauthError,
      ),
    );
    this.audit.record('enterprise_access_decision', {
      outcome: oauthError === null ? 'issued' : 'refused',
      oauth_error: oauthError,
      agent_id: agentId,
      principal: facts.principal ?? null,
      issuer: facts.issuer.issuer,
      resource: facts.resource ?? null,
      scopes: facts.scopes ?? [],
      sid: facts.authorizationId ?? null,
    });
  }
}

/** Why a verified JWT is no acceptable ID-JAG (§3.1, §4.4.1), or undefined. Depends on the token only: stable once true. */
function idJagProblem(
  typ: unknown,
  claims: JWTPayload,
  maxLifetimeSeconds: number,
  tenant: string | undefined,
): string | undefined {
  const type = typeof typ === 'string' ? typ.toLowerCase() : '';
  if (type !== ID_JAG_TYPE && type !== `application/${ID_JAG_TYPE}`) return `its typ is not ${ID_JAG_TYPE}`;
  if (Array.isArray(claims.aud) && claims.aud.length !== 1) return 'its aud names more than one audience';
  for (const name of ['sub', 'client_id', 'jti'] as const)
    if (typeof claims[name] !== 'string' || claims[name] === '') return `its ${name} is missing`;
  if (typeof claims.iat !== 'number') return 'its iat is missing';
  if ((claims.exp as number) - claims.iat > maxLifetimeSeconds) return 'it lives longer than max_assertion_lifetime';
  const resource = claims.resource;
  if (
    resource !== undefined &&
    !(typeof resource === 'string' && resource !== '') &&
    !(Array.isArray(resource) && resource.every((item) => typeof item === 'string' && item !== ''))
  )
    return 'its resource is not a URI or a list of them';
  if (claims.scope !== undefined && typeof claims.scope !== 'string') return 'its scope is not a string';
  const cnf = claims.cnf;
  if (
    cnf !== undefined &&
    (typeof cnf !== 'object' || cnf === null || typeof (cnf as { jkt?: unknown }).jkt !== 'string')
  )
    return 'its cnf names no DPoP key (jkt)';
  if (tenant !== undefined && claims.tenant !== tenant) return 'its tenant is not the configured one';
  return undefined;
}
