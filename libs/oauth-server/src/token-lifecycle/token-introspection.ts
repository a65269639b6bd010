import { createHash } from 'node:crypto';
import { Clock, isCanonicalUuid } from '@broker/domain';
import { AgentRepository, TokenStateRepository, type GrantFacts, type RefreshTokenState } from '@broker/persistence';
import { BrokerMetrics } from '@broker/telemetry';
import { Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { AccessTokenIssuer } from '../token/access-token-issuer';
import { FamilyClients } from './family-clients';
import { accessTokenClient, issuedToClient } from './issued-to-client';
import { LifecycleClients, type Introspector } from './lifecycle-clients';
import { LocalTokenVerifier } from './local-token-verifier';
import { looksLikeJwt, readTokenRequestForm } from './token-form-rules';

/** RFC 7662 §2.2: the answer about a token; only `active` when it is not. */
export interface IntrospectionResponse {
  readonly active: boolean;
  readonly scope?: string;
  readonly client_id?: string;
  readonly sub?: string;
  readonly aud?: string | readonly string[];
  readonly exp?: number;
  readonly iat?: number;
  readonly iss?: string;
  readonly jti?: string;
  /**
   * `Bearer` for an access token, `DPoP` for one bound to a DPoP key (RFC 9449 §6.2); `refresh_token` for a refresh
   * token (which is no bearer token for a resource).
   */
  readonly token_type?: string;
  /** RFC 8693 §4.1: the actor of an impersonation token. */
  readonly act?: { readonly iss: string; readonly sub: string };
  /** RFC 9449 §6.2: the DPoP key a bound access token is for (RFC 7800 confirmation, `jkt` thumbprint). */
  readonly cnf?: { readonly jkt: string };
  /** RFC 9396 §9.1: what the token authorizes, as it carries it (a backchannel request's approved tool call). */
  readonly authorization_details?: readonly unknown[];
}

const INACTIVE: IntrospectionResponse = Object.freeze({ active: false });

/**
 * `POST /oauth2/introspect` (RFC 7662). The caller is a confidential agent or the gateway
 * (`LifecycleClients.introspector`). An agent learns about the tokens issued to its own client
 * id only (`issuedToClient`), never a metadata-document client's; the gateway about any token
 * of this broker. Any other token, unknown or not, is answered exactly `{"active": false}`,
 * so the answer never tells whether a token exists.
 *
 * An access token is active when it is a JWT of ours (`LocalTokenVerifier`: our keys, our
 * issuer, within its lifetime), its `jti` is not revoked, its `sid` family (if any) is not
 * revoked, its agent still exists and is not suspended and, for a person's delegated token (`sub` is not the
 * agent, no `act`), the person's grant to the agent is active and was not granted anew
 * after the token was issued; an enterprise-allowed token's `sid` must name an enterprise
 * authorization that is not revoked instead. A refresh token is active when current (not rotated), not
 * revoked, within its idle and absolute expiry, its agent not suspended, and its grant is active and older than it.
 * On PostgreSQL these facts come from memory, dropped by notifications (`TokenStateCache`).
 */
@Injectable()
export class TokenIntrospection {
  /** Whose refresh token family an access token's `sid` names, for an agent's question (`issuedToClient`). */
  private readonly families: FamilyClients;

  constructor(
    private readonly clients: LifecycleClients,
    private readonly verifier: LocalTokenVerifier,
    private readonly state: TokenStateRepository,
    private readonly agents: AgentRepository,
    private readonly issuer: AccessTokenIssuer,
    private readonly clock: Clock,
    private readonly metrics: BrokerMetrics,
  ) {
    this.families = new FamilyClients(state);
  }

  async introspect(
    contentType: string | undefined,
    body: Buffer | undefined,
    authorization: string | undefined,
  ): Promise<IntrospectionResponse> {
    const request = readTokenRequestForm(contentType, body);
    const caller = await this.clients.introspector(authorization, request.form);
    const token = request.token();
    // The form of the token decides where to look, whatever `token_type_hint` says (RFC 7662 §2.1: only a hint).
    const answer =
      (looksLikeJwt(token) ? await this.accessToken(token, caller) : await this.refreshToken(token, caller)) ??
      INACTIVE;
    this.metrics.tokenIntrospection(answer.active);
    return answer;
  }

  /** Undefined when the token is no access token of ours the caller may see. */
  private async accessToken(token: string, caller: Introspector): Promise<IntrospectionResponse | undefined> {
    const claims = await this.verifier.verify(token);
    if (claims === undefined) return undefined;
    const { jti, sub, client_id: agentId, sid, iat, exp } = claims;
    if (
      typeof jti !== 'string' ||
      !isCanonicalUuid(jti) ||
      typeof sub !== 'string' ||
      typeof agentId !== 'string' ||
      !isCanonicalUuid(agentId) ||
      claims.agent_id !== agentId
    )
      return undefined;
    if (
      typeof iat !== 'number' ||
      typeof exp !== 'number' ||
      (sid !== undefined && (typeof sid !== 'string' || !isCanonicalUuid(sid)))
    )
      return undefined;
    if (caller.kind === 'agent') {
      const client = await accessTokenClient(claims, this.families);
      if (client === undefined || !issuedToClient(client, caller)) return undefined;
    }
    const act = actOf(claims);
    const delegated = sub !== agentId && act === undefined;
    if (!(await this.agentServes(agentId))) return INACTIVE;
    const now = this.clock.now();
    const facts = await this.state.accessTokenFacts(
      { jti, familyId: sid, principal: delegated ? sub : undefined, agentId },
      now,
    );
    if (facts.revoked || facts.familyRevoked) return INACTIVE;
    // A second's granularity: `iat` has no more, and a grant given in the second the token was issued came before it.
    // An enterprise-allowed token (its `sid` an unrevoked enterprise authorization) has no consent grant behind it.
    if (delegated && !facts.enterprise && !grantCovers(facts.grant, now, Math.floor(iat) * 1000 + 999)) return INACTIVE;
    return {
      active: true,
      ...(typeof claims.scope === 'string' ? { scope: claims.scope } : {}),
      client_id: agentId,
      sub,
      ...(claims.aud === undefined ? {} : { aud: claims.aud }),
      exp,
      iat,
      iss: this.issuer.issuer,
      jti,
      ...cnfOf(claims),
      ...(act === undefined ? {} : { act }),
      ...(Array.isArray(claims.authorization_details)
        ? { authorization_details: claims.authorization_details as unknown[] }
        : {}),
    };
  }

  /**
   * The agent still exists and is not suspended (docs/admin-api.md "Suspending an agent"): read
   * from `ClientCache`, which every replica clears on `registry_changed`.
   */
  private async agentServes(agentId: string): Promise<boolean> {
    const client = await this.agents.findClient(agentId);
    return client !== undefined && client.agent.suspension === null;
  }

  /** Undefined when the token is no refresh token of ours the caller may see. */
  private async refreshToken(token: string, caller: Introspector): Promise<IntrospectionResponse | undefined> {
    const found = await this.state.refreshToken(createHash('sha256').update(token).digest());
    if (found === undefined) return undefined;
    // An agent's own refresh tokens only: a metadata-document client's carry the agent id but are that client's.
    if (caller.kind === 'agent' && !issuedToClient(found, caller)) return undefined;
    const now = this.clock.now();
    if (!refreshTokenActive(found, now) || !(await this.agentServes(found.agentId))) return INACTIVE;
    const expiresAt = Math.min(found.idleExpiresAt.getTime(), found.familyExpiresAt.getTime());
    return {
      active: true,
      scope: found.scopes.join(' '),
      client_id: found.agentId,
      sub: found.principal,
      ...(found.resources.length === 0
        ? {}
        : { aud: found.resources.length === 1 ? found.resources[0] : found.resources }),
      exp: Math.floor(expiresAt / 1000),
      iat: Math.floor(found.issuedAt.getTime() / 1000),
      iss: this.issuer.issuer,
      token_type: 'refresh_token',
    };
  }
}

/** The grant exists, is active at `now`, and was (last) granted no later than the token was issued. */
function grantCovers(grant: GrantFacts | undefined, now: Date, issuedAtMs: number): boolean {
  if (grant === undefined) return false;
  if (grant.validUntil !== null && grant.validUntil.getTime() <= now.getTime()) return false;
  return grant.createdAt.getTime() <= issuedAtMs;
}

/**
 * Current (never rotated), not revoked, within both expiries, its grant active and not granted anew after it, and
 * still usable (its family not revoked, every resource and scope still delegated, its client's secret not rotated):
 * active only if presenting it could buy a token.
 */
function refreshTokenActive(token: RefreshTokenState, now: Date): boolean {
  if (token.rotatedAt !== null || token.revokedAt !== null || !token.usable) return false;
  if (token.idleExpiresAt.getTime() <= now.getTime() || token.familyExpiresAt.getTime() <= now.getTime()) return false;
  return grantCovers(token.grant, now, token.issuedAt.getTime());
}

function actOf(claims: JWTPayload): { iss: string; sub: string } | undefined {
  const act = claims.act as { iss?: unknown; sub?: unknown } | undefined;
  if (
    act === undefined ||
    act === null ||
    typeof act !== 'object' ||
    typeof act.iss !== 'string' ||
    typeof act.sub !== 'string'
  )
    return undefined;
  return { iss: act.iss, sub: act.sub };
}

/** RFC 9449 §6.2: a bound token's `token_type` DPoP and its `cnf`; otherwise `Bearer`. */
function cnfOf(claims: Readonly<Record<string, unknown>>): Pick<IntrospectionResponse, 'token_type' | 'cnf'> {
  const cnf = claims.cnf;
  const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined;
  return typeof jkt === 'string' ? { token_type: 'DPoP', cnf: { jkt } } : { token_type: 'Bearer' };
}
