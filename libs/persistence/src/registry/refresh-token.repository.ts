import type { DataSource, EntityManager } from 'typeorm';

/** A refresh token as stored (its value never is: only its SHA-256). */
export interface RefreshTokenRecord {
  readonly id: string;
  readonly familyId: string;
  readonly agentId: string;
  readonly principal: string;
  readonly grantId: string;
  readonly resources: readonly string[];
  readonly scopes: readonly string[];
  /** The confidential client's credential digest when the token was issued (null: a public client). */
  readonly credentialSha256: Buffer | null;
  readonly issuedAt: Date;
  readonly idleExpiresAt: Date;
  readonly familyExpiresAt: Date;
}

/** What a new token of a family needs; the family's absolute expiry is the first token's. */
export interface NewRefreshToken {
  readonly id: string;
  readonly tokenSha256: Buffer;
  readonly resources: readonly string[];
  readonly scopes: readonly string[];
  readonly issuedAt: Date;
  readonly idleExpiresAt: Date;
}

/** The first token of a family (an authorization code's). */
export interface NewRefreshFamily extends NewRefreshToken {
  readonly familyId: string;
  readonly agentId: string;
  readonly principal: string;
  readonly grantId: string;
  readonly credentialSha256: Buffer | null;
  readonly familyExpiresAt: Date;
}

/**
 * What presenting a refresh token did: rotated (the successor was stored in the same
 * transaction), reused (it had been rotated already: the whole family is now revoked),
 * inactive (revoked, or past its idle or absolute expiry), or unknown.
 */
export type RotationOutcome =
  | { readonly outcome: 'rotated'; readonly previous: RefreshTokenRecord; readonly successor: RefreshTokenRecord }
  | { readonly outcome: 'reused'; readonly previous: RefreshTokenRecord }
  | { readonly outcome: 'inactive' }
  | { readonly outcome: 'unknown' };

interface Row {
  id: string;
  family_id: string;
  agent_id: string;
  principal: string;
  grant_id: string;
  resources: string[];
  scopes: string[];
  credential_sha256: Buffer | null;
  issued_at: Date;
  idle_expires_at: Date;
  family_expires_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
}

const toRecord = (row: Row): RefreshTokenRecord => ({
  id: row.id,
  familyId: row.family_id,
  agentId: row.agent_id,
  principal: row.principal,
  grantId: row.grant_id,
  resources: row.resources,
  scopes: row.scopes,
  credentialSha256: row.credential_sha256,
  issuedAt: row.issued_at,
  idleExpiresAt: row.idle_expires_at,
  familyExpiresAt: row.family_expires_at,
});

const INSERT = `INSERT INTO refresh_tokens (id, family_id, token_sha256, agent_id, principal, grant_id, resources, scopes, credential_sha256, issued_at, idle_expires_at, family_expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`;

/**
 * Refresh tokens of the local authorization server, rotated on every use (OAuth 2.1 §4.3.1).
 * Rotation is one conditional UPDATE of the presented token (still current, not revoked,
 * within both expiries) followed, in the same transaction, by the successor's INSERT:
 * concurrent presentations of one token, on any replica, meet at that row and exactly one
 * rotates it. A presentation of a token that was already rotated is a reuse (RFC 9700
 * §4.14.2): the whole family is revoked.
 */
export class RefreshTokenRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Stores the first token of a new family. */
  async issue(token: NewRefreshFamily, manager: EntityManager = this.dataSource.manager): Promise<RefreshTokenRecord> {
    const rows = await manager.query<Row[]>(INSERT, [
      token.id,
      token.familyId,
      token.tokenSha256,
      token.agentId,
      token.principal,
      token.grantId,
      JSON.stringify(token.resources),
      JSON.stringify(token.scopes),
      token.credentialSha256,
      token.issuedAt,
      token.idleExpiresAt,
      token.familyExpiresAt,
    ]);
    return toRecord(rows[0] as Row);
  }

  /**
   * Rotates the token whose SHA-256 is `tokenSha256` at `now`: `successor` decides the next
   * token from the current one (and may throw to refuse, leaving the token unrotated).
   */
  async rotate(tokenSha256: Buffer, now: Date, successor: (current: RefreshTokenRecord) => NewRefreshToken | Promise<NewRefreshToken>): Promise<RotationOutcome> {
    return this.dataSource.transaction(async (manager): Promise<RotationOutcome> => {
      const [rotated] = await manager.query<[Row[], number]>(
        `UPDATE refresh_tokens SET rotated_at = $2
          WHERE token_sha256 = $1 AND rotated_at IS NULL AND revoked_at IS NULL AND idle_expires_at > $2 AND family_expires_at > $2
          RETURNING *`,
        [tokenSha256, now],
      );
      const row = rotated[0];
      if (row !== undefined) {
        const previous = toRecord(row);
        const next = await successor(previous);
        const rows = await manager.query<Row[]>(INSERT, [
          next.id,
          row.family_id,
          next.tokenSha256,
          row.agent_id,
          row.principal,
          row.grant_id,
          JSON.stringify(next.resources),
          JSON.stringify(next.scopes),
          row.credential_sha256,
          next.issuedAt,
          next.idleExpiresAt < row.family_expires_at ? next.idleExpiresAt : row.family_expires_at,
          row.family_expires_at,
        ]);
        return { outcome: 'rotated', previous, successor: toRecord(rows[0] as Row) };
      }
      const found = (await manager.query<Row[]>('SELECT * FROM refresh_tokens WHERE token_sha256 = $1 FOR UPDATE', [tokenSha256]))[0];
      if (found === undefined) return { outcome: 'unknown' };
      if (found.rotated_at !== null && found.revoked_at === null) {
        await this.revokeFamilyWith(manager, found.family_id, now);
        return { outcome: 'reused', previous: toRecord(found) };
      }
      return { outcome: 'inactive' };
    });
  }

  /** Revokes every token of the family; true when one was still unrevoked. */
  revokeFamily(familyId: string, now: Date): Promise<boolean> {
    return this.revokeFamilyWith(this.dataSource.manager, familyId, now);
  }

  /** The live family of the token whose SHA-256 is `tokenSha256`, if issued to `agentId` (RFC 7009: a client revokes only its own). */
  async familyOf(tokenSha256: Buffer, agentId: string): Promise<string | undefined> {
    const rows = await this.dataSource.query<{ family_id: string }[]>('SELECT family_id FROM refresh_tokens WHERE token_sha256 = $1 AND agent_id = $2', [tokenSha256, agentId]);
    return rows[0]?.family_id;
  }

  /** Per agent, the person's families still usable at `now` (never a token). */
  async liveFamiliesByAgent(principal: string, now: Date): Promise<Map<string, number>> {
    const rows = await this.dataSource.query<{ agent_id: string; families: number }[]>(
      `SELECT agent_id, count(DISTINCT family_id)::int AS families FROM refresh_tokens
        WHERE principal = $1 AND rotated_at IS NULL AND revoked_at IS NULL AND idle_expires_at > $2 AND family_expires_at > $2
        GROUP BY agent_id`,
      [principal, now],
    );
    return new Map(rows.map((r) => [r.agent_id, r.families]));
  }

  private async revokeFamilyWith(manager: EntityManager, familyId: string, now: Date): Promise<boolean> {
    const [, count] = await manager.query<[unknown[], number]>('UPDATE refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL', [familyId, now]);
    return count > 0;
  }
}
