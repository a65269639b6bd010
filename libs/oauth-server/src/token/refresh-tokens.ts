import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, Random, type Agent } from '@broker/domain';
import { EventLedger, refreshTokenEvent } from '@broker/events';
import {
  GrantRepository,
  RefreshTokenRepository,
  TokenStateRepository,
  type RefreshRefusal,
  type RefreshTokenRecord,
} from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import type { TokenResponse } from './access-token-issuer';

/** The scope that asks for a refresh token (OpenID Connect Core §11, as MCP clients send it). */
export const OFFLINE_ACCESS = 'offline_access';

/** SHA-256 of a refresh token's value: what is stored and looked up, never the value. */
export function refreshTokenDigest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** HKDF info of the keys successor values are derived under. */
const SUCCESSOR_KEY_INFO = 'agent-identity-broker refresh token successor';

/** Who a new family is for: the code's client, person, scopes and resources. */
export interface FamilyStart {
  readonly agent: Agent;
  readonly principal: string;
  readonly scopes: readonly string[];
  readonly resources: readonly string[];
  /** The client's credential digest now (null: public). */
  readonly credentialSha256: Buffer | null;
  /** The metadata document URL the code was redeemed with (null: the agent's own client_id). */
  readonly clientIdUrl: string | null;
  /** RFC 9449 §5: the DPoP key a public client's family is bound to (null: none). */
  readonly dpopJkt: string | null;
}

/**
 * Refresh tokens of the local authorization server (docs/oauth2.md "Token lifecycle"): 256 random
 * bits, stored as their SHA-256, in families started by an authorization code that asked
 * for `offline_access`, each family bound to the client (and its credential), the person,
 * their grant and the authorized resources. Every token lives `idle_ttl` unused and never
 * past its family's `absolute_ttl`; each use rotates it. Events name the family, never a
 * token.
 */
@Injectable()
export class RefreshTokens {
  readonly enabled: boolean;
  private readonly idleTtlMs: number;
  private readonly absoluteTtlMs: number;
  private readonly reuseGraceMs: number;
  /** Keys successors are derived under (HKDF of each `third_party_oauth2.jwe_keys` key); the first derives new ones. */
  private readonly successorKeys: readonly Buffer[];

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly repository: RefreshTokenRepository,
    private readonly grants: GrantRepository,
    private readonly tokenState: TokenStateRepository,
    private readonly events: EventLedger,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    const settings = config.oauth2_authorization_server.local.refresh_tokens;
    this.enabled = settings.enabled;
    this.idleTtlMs = settings.idle_ttl;
    this.absoluteTtlMs = settings.absolute_ttl;
    this.reuseGraceMs = settings.reuse_grace;
    this.successorKeys = config.third_party_oauth2.jwe_keys.map(({ key }) =>
      Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), SUCCESSOR_KEY_INFO, 32)),
    );
  }

  /** Whether a code for `scopes` buys a refresh token: asked for with `offline_access`, and enabled. */
  wanted(scopes: readonly string[]): boolean {
    return this.enabled && scopes.includes(OFFLINE_ACCESS);
  }

  /**
   * Starts a family for an authorization code's tokens: bound to the person's active grant
   * for the agent (none: the grant was revoked since the consent, `invalid_grant`).
   */
  async start(family: FamilyStart): Promise<{ value: string; record: RefreshTokenRecord }> {
    const now = this.clock.now();
    const grantId = await this.grants.activeId(family.principal, family.agent.id, now);
    if (grantId === undefined)
      throw new OAuthError('invalid_grant', 'the grant for this client was revoked or has expired');
    const value = this.random.token(32);
    const record = await this.repository.issue({
      id: this.random.uuid(),
      familyId: this.random.uuid(),
      tokenSha256: refreshTokenDigest(value),
      agentId: family.agent.id,
      principal: family.principal,
      grantId,
      resources: family.resources,
      scopes: family.scopes,
      credentialSha256: family.credentialSha256,
      clientIdUrl: family.clientIdUrl,
      dpopJkt: family.dpopJkt,
      issuedAt: now,
      idleExpiresAt: new Date(now.getTime() + this.idleTtlMs),
      familyExpiresAt: new Date(now.getTime() + this.absoluteTtlMs),
    });
    this.recordEvent('refresh_token.issued', record, 'success');
    return { value, record };
  }

  /**
   * Presents `value` for the client: its successor and the rotated family's record, or
   * `invalid_grant` (`invalid_scope` / `invalid_target` for a narrowing outside the token,
   * which leaves it current). A token rotated before ends its family (reuse, an event),
   * unless the same client presents it again within `reuse_grace` of its rotation: then it
   * gets the same successor again (never a second one, so the family never branches).
   *
   * A successor's value is derived from the presented value (HMAC under a key derived from
   * each configured `third_party_oauth2.jwe_keys` key, which every replica holds and the
   * database does not): that is how a presentation within the grace gets the same value back
   * although only digests are stored. Without the key, a value says nothing of its successor.
   */
  async rotate(
    value: string,
    client: { agent: Agent; credentialSha256: Buffer | null; clientIdUrl: string | null; dpopJkt: string | null },
    narrowing: { scopes?: readonly string[]; resource?: string },
  ): Promise<{ value: string; record: RefreshTokenRecord }> {
    const now = this.clock.now();
    const successors = this.successorValues(value);
    const next = successors[0] ?? this.random.token(32);
    const outcome = await this.repository.rotate({
      tokenSha256: refreshTokenDigest(value),
      now,
      agentId: client.agent.id,
      credentialSha256: client.credentialSha256,
      clientIdUrl: client.clientIdUrl,
      dpopJkt: client.dpopJkt,
      ...narrowing,
      successor: {
        id: this.random.uuid(),
        tokenSha256: refreshTokenDigest(next),
        idleExpiresAt: new Date(now.getTime() + this.idleTtlMs),
      },
      grace: { windowMs: this.reuseGraceMs, successors: successors.map(refreshTokenDigest) },
    });
    switch (outcome.outcome) {
      case 'rotated': {
        this.recordEvent('refresh_token.rotated', outcome.successor, 'success');
        const replayed = outcome.replayed === undefined ? next : successors[outcome.replayed];
        if (replayed === undefined) throw new Error('the reuse grace matched no derived successor');
        return { value: replayed, record: outcome.successor };
      }
      case 'reused':
        // This process's introspection forgets the family now; other replicas hear it from the database (token_revoked).
        this.tokenState.familyRevoked(outcome.previous.familyId);
        this.recordEvent('refresh_token.reused', outcome.previous, 'failure');
        throw new OAuthError('invalid_grant', 'the refresh token was already used; its sign-in has been ended');
      case 'refused':
        throw refusal(outcome.reason, client.dpopJkt);
    }
  }

  /** The successor values `value` derives to, one per key (the first is the one a rotation now stores). */
  private successorValues(value: string): string[] {
    return this.successorKeys.map((key) => createHmac('sha256', key).update(value, 'utf8').digest('base64url'));
  }

  /** Ends a family whose client may no longer hold it (its registration changed); true when it was live. */
  async end(record: RefreshTokenRecord): Promise<boolean> {
    const ended = await this.repository.revokeFamily(record.familyId, this.clock.now());
    this.tokenState.familyRevoked(record.familyId);
    return ended;
  }

  /** The token endpoint's hot path: queued, written in batches (docs/events.md). */
  private recordEvent(
    type: 'refresh_token.issued' | 'refresh_token.rotated' | 'refresh_token.reused',
    record: RefreshTokenRecord,
    outcome: 'success' | 'failure',
  ): void {
    this.events.enqueue(refreshTokenEvent(type, record, outcome));
  }
}

/** The OAuth error a refused presentation answers. */
function refusal(reason: RefreshRefusal, dpopJkt: string | null): OAuthError {
  switch (reason) {
    case 'scope':
      return new OAuthError('invalid_scope', 'the requested scope exceeds the scope of the refresh token');
    case 'resource':
      return new OAuthError('invalid_target', 'the requested resource is not one the refresh token was issued for');
    case 'client':
      return new OAuthError('invalid_grant', 'the refresh token is invalid or was issued to another client');
    case 'key':
      // RFC 9449 §5: a bound refresh token needs a proof made with its key.
      return dpopJkt === null
        ? new OAuthError('invalid_dpop_proof', 'this refresh token is bound to a DPoP key: send a proof made with it')
        : new OAuthError('invalid_grant', 'the refresh token is bound to another DPoP key');
    case 'credential':
      return new OAuthError('invalid_grant', "the client's credentials changed since the refresh token was issued");
    case 'grant':
      return new OAuthError('invalid_grant', 'the grant for this client was revoked or has expired');
    case 'delegation':
      return new OAuthError(
        'invalid_grant',
        "the person's grant no longer delegates this refresh token's resources or scopes",
      );
    case 'unknown':
    case 'inactive':
      return new OAuthError('invalid_grant', 'the refresh token is invalid, expired or revoked');
  }
}

/** The token response with the refresh token added. */
export function withRefreshToken(response: TokenResponse, value: string): TokenResponse {
  return { ...response, refresh_token: value };
}
