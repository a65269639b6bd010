import { Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../prepared-query';
import { familyDelegated } from './refresh-token-families';
import { TokenStateCache, type AccessTokenFacts, type AccessTokenKey, type GrantFacts } from './token-state-cache';

export type { AccessTokenFacts, AccessTokenKey, GrantFacts } from './token-state-cache';

/** A refresh token as introspection and revocation see it (looked up by the SHA-256 of its value). */
export interface RefreshTokenState {
  readonly familyId: string;
  readonly agentId: string;
  readonly principal: string;
  /** The metadata-document client it was issued to; null for an agent's own client id. */
  readonly clientIdUrl: string | null;
  readonly scopes: readonly string[];
  readonly resources: readonly string[];
  readonly issuedAt: Date;
  readonly idleExpiresAt: Date;
  readonly familyExpiresAt: Date;
  readonly rotatedAt: Date | null;
  readonly revokedAt: Date | null;
  /** Its grant (the row it is bound to: deleting the grant deletes the token). */
  readonly grant: GrantFacts;
  /**
   * Whether it could still buy a token besides its own state and its grant's: its family is not
   * revoked, the grant still delegates every resource and scope of the family, and a confidential
   * client's family was issued under the agent's current secret (a rotated secret ends them).
   */
  readonly usable: boolean;
}

interface FactsRow {
  revoked: boolean;
  family_revoked: boolean;
  /** Null: the `sid` is no enterprise authorization; false: it was revoked. */
  enterprise_live: boolean | null;
  valid_until: Date | null;
  created_at: Date | null;
}

interface RefreshRow {
  family_id: string;
  agent_id: string;
  principal: string;
  client_id_url: string | null;
  scopes: string[];
  resources: string[];
  issued_at: Date;
  idle_expires_at: Date;
  family_expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  grant_valid_until: Date | null;
  grant_created_at: Date;
  usable: boolean;
}

/**
 * Everything introspection reads about an access token besides its JWT, in one round trip:
 * whether its `jti` is revoked, whether its `sid` family is (any of its tokens revoked), whether
 * its `sid` is an enterprise authorization and still live, and the person's grant to the agent
 * (the unique (principal, agent) row, judged by the caller).
 */
const FACTS_SQL = `SELECT EXISTS (SELECT 1 FROM revoked_access_tokens WHERE jti = $1::uuid) AS revoked,
       EXISTS (SELECT 1 FROM refresh_token_families WHERE id = $2::uuid AND revoked_at IS NOT NULL) AS family_revoked,
       (SELECT e.revoked_at IS NULL FROM enterprise_authorizations e WHERE e.id = $2::uuid) AS enterprise_live,
       g.valid_until, g.created_at
  FROM (SELECT 1) AS one
  LEFT JOIN grants g ON g.principal = $3::varchar AND g.agent_id = $4::uuid`;

const REFRESH_SQL = `SELECT r.family_id, r.agent_id, r.principal, r.client_id_url, r.scopes, r.resources, r.issued_at, r.idle_expires_at,
       r.family_expires_at, r.rotated_at, r.revoked_at, g.valid_until AS grant_valid_until, g.created_at AS grant_created_at,
       (f.revoked_at IS NULL AND ${familyDelegated('r', 'f', 'g')}
        AND (r.credential_sha256 IS NULL OR r.credential_sha256 IS NOT DISTINCT FROM
             (SELECT c.secret_sha256 FROM agent_client_credentials c WHERE c.agent_id = r.agent_id))) AS usable
  FROM refresh_tokens r JOIN grants g ON g.id = r.grant_id JOIN refresh_token_families f ON f.id = r.family_id
 WHERE r.token_sha256 = $1`;

/**
 * The state of the local authorization server's tokens that revocation (RFC 7009) and
 * introspection (RFC 7662) read and write: revoked access tokens (`revoked_access_tokens`,
 * by `jti`, until their `exp`), refresh tokens by the SHA-256 of their value, and the
 * grants behind them. On PostgreSQL an access token's facts are kept in memory
 * (`TokenStateCache`) until a notification says they changed; on PGlite every read goes to
 * the database.
 */
@Injectable()
export class TokenStateRepository {
  private readonly facts: (values: readonly unknown[]) => Promise<FactsRow[]>;
  private readonly refreshRows: (values: readonly unknown[]) => Promise<RefreshRow[]>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** The process's token state cache; none on PGlite (no notification connection). */
    @Optional() private readonly cache?: TokenStateCache,
  ) {
    this.facts = preparedQuery<FactsRow>(dataSource, 'broker_access_token_facts', FACTS_SQL);
    // Prepared too: the delegation check makes it a statement worth planning once per connection.
    this.refreshRows = preparedQuery<RefreshRow>(dataSource, 'broker_refresh_token_state', REFRESH_SQL);
  }

  /** Revocation, the `sid` family and (for a person's token) the grant of an access token; `jti` and `familyId` are UUIDs. */
  accessTokenFacts(key: AccessTokenKey, now: Date): Promise<AccessTokenFacts> {
    if (this.cache === undefined) return this.readFacts(key);
    return this.cache.read(key, now.getTime(), () => this.readFacts(key));
  }

  /** The refresh token whose SHA-256 is `tokenSha256`, whatever its state; undefined when there is none. */
  async refreshToken(tokenSha256: Buffer): Promise<RefreshTokenState | undefined> {
    const row = (await this.refreshRows([tokenSha256]))[0];
    if (row === undefined) return undefined;
    return {
      familyId: row.family_id,
      agentId: row.agent_id,
      principal: row.principal,
      clientIdUrl: row.client_id_url,
      scopes: row.scopes,
      resources: row.resources,
      issuedAt: row.issued_at,
      idleExpiresAt: row.idle_expires_at,
      familyExpiresAt: row.family_expires_at,
      rotatedAt: row.rotated_at,
      revokedAt: row.revoked_at,
      grant: { validUntil: row.grant_valid_until, createdAt: row.grant_created_at },
      usable: row.usable,
    };
  }

  /** The metadata-document client of the family's tokens (null: the agent's own client id); undefined when the family has no token left. */
  async familyClient(familyId: string): Promise<{ agentId: string; clientIdUrl: string | null } | undefined> {
    const rows = await this.dataSource.query<{ agent_id: string; client_id_url: string | null }[]>(
      'SELECT agent_id, client_id_url FROM refresh_tokens WHERE family_id = $1 LIMIT 1',
      [familyId],
    );
    const row = rows[0];
    return row === undefined ? undefined : { agentId: row.agent_id, clientIdUrl: row.client_id_url };
  }

  /**
   * Stores the revocation of the access token `jti` until `expiresAt` (its `exp`); true when
   * it was not revoked yet, and then `within` runs in the same transaction (its event).
   */
  async revokeAccessToken(
    jti: string,
    expiresAt: Date,
    within?: (manager: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const inserted = await manager.query<unknown[]>(
          'INSERT INTO revoked_access_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING RETURNING jti',
          [jti, expiresAt],
        );
        if (inserted.length === 0) return false;
        await within?.(manager);
        return true;
      });
    } finally {
      // Committed (or rolled back): this process's next introspection reads it again.
      this.cache?.forgetJti(jti);
    }
  }

  /** After a family was revoked through this process: its access tokens are read again here at once. */
  familyRevoked(familyId: string): void {
    this.cache?.forgetFamily(familyId);
  }

  /** Deletes up to `batch` revocations of tokens that expired before `cutoff` (they can never verify again); how many went. */
  async purgeExpired(cutoff: Date, batch: number): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM revoked_access_tokens WHERE jti IN (SELECT jti FROM revoked_access_tokens WHERE expires_at < $1 LIMIT $2)',
      [cutoff, batch],
    );
    return count;
  }

  private async readFacts(key: AccessTokenKey): Promise<AccessTokenFacts> {
    const row = (await this.facts([key.jti, key.familyId ?? null, key.principal ?? null, key.agentId]))[0];
    return {
      revoked: row?.revoked === true,
      familyRevoked: row?.family_revoked === true || row?.enterprise_live === false,
      enterprise: row?.enterprise_live === true || row?.enterprise_live === false,
      grant:
        row?.created_at === null || row?.created_at === undefined
          ? undefined
          : { validUntil: row.valid_until, createdAt: row.created_at },
    };
  }
}
