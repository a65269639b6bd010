import { normaliseResourceUri } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../prepared-query';
import { endFamilies, familyDelegated } from './refresh-token-families';
import { active } from './grant.repository';

/** A refresh token as stored (its value never is: only its SHA-256). */
export interface RefreshTokenRecord {
  readonly id: string;
  readonly familyId: string;
  readonly agentId: string;
  readonly principal: string;
  readonly grantId: string;
  readonly resources: readonly string[];
  readonly scopes: readonly string[];
  /** The confidential client's credential digest when the family began (null: a public client). */
  readonly credentialSha256: Buffer | null;
  /** The Client ID Metadata Document URL the family was issued to (null: the agent's own client_id). */
  readonly clientIdUrl: string | null;
  /** RFC 9449 §5: the JWK thumbprint of the DPoP key the family is bound to (a public client's); null: none. */
  readonly dpopJkt: string | null;
  readonly issuedAt: Date;
  readonly idleExpiresAt: Date;
  readonly familyExpiresAt: Date;
}

/** The first token of a family (an authorization code's): the record, and the digest of its value. */
export interface NewRefreshFamily extends RefreshTokenRecord {
  readonly tokenSha256: Buffer;
}

/** A refresh token presented at the token endpoint by an authenticated (or identified public) client. */
export interface RefreshPresentation {
  readonly tokenSha256: Buffer;
  readonly now: Date;
  /** The presenting client: its agent, its credential digest now (null: public), the document URL it presented (null: none). */
  readonly agentId: string;
  readonly credentialSha256: Buffer | null;
  readonly clientIdUrl: string | null;
  /** The thumbprint of the DPoP proof's key sent with the request (null: no proof); a bound family needs its own. */
  readonly dpopJkt: string | null;
  /** Narrowing the client asked for (RFC 6749 §6, RFC 8707 §2.2): refused, the token left current, unless within the token's. */
  readonly scopes?: readonly string[];
  readonly resource?: string;
  /** The successor's id, value digest and idle expiry (capped by the family's absolute expiry). */
  readonly successor: { readonly id: string; readonly tokenSha256: Buffer; readonly idleExpiresAt: Date };
  /**
   * The reuse grace (docs/oauth2.md "Token lifecycle"): a token rotated at most `windowMs` ago, presented again by
   * the same client (agent, document URL, credential and DPoP key), gets the successor it was rotated into, if that
   * successor is still current: its value digest is one of `successors` (the successor values the presented value
   * derives to, one per key). Absent or 0: every second presentation is a reuse.
   */
  readonly grace?: { readonly windowMs: number; readonly successors: readonly Buffer[] };
}

/** Why a presented token bought nothing. */
export type RefreshRefusal =
  'unknown' | 'client' | 'key' | 'credential' | 'inactive' | 'grant' | 'delegation' | 'scope' | 'resource';

/**
 * What presenting a refresh token did: rotated (the successor is stored, the presented token
 * is spent; `replayed` is the index in `grace.successors` when the presentation fell within
 * the reuse grace and got the successor already stored), reused (it had been rotated already:
 * the whole family is now revoked), or refused (the token, when it exists, is left as it was).
 */
export type RotationOutcome =
  | { readonly outcome: 'rotated'; readonly successor: RefreshTokenRecord; readonly replayed?: number }
  | { readonly outcome: 'reused'; readonly previous: RefreshTokenRecord }
  | { readonly outcome: 'refused'; readonly reason: RefreshRefusal; readonly record?: RefreshTokenRecord };

interface Row {
  id: string;
  family_id: string;
  agent_id: string;
  principal: string;
  grant_id: string;
  resources: string[];
  scopes: string[];
  credential_sha256: Buffer | null;
  client_id_url: string | null;
  dpop_jkt: string | null;
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
  clientIdUrl: row.client_id_url,
  dpopJkt: row.dpop_jkt,
  issuedAt: row.issued_at,
  idleExpiresAt: row.idle_expires_at,
  familyExpiresAt: row.family_expires_at,
});

/**
 * The rotation, one statement (its own transaction, one round trip). It first locks the
 * token's family row (`refresh_token_families`, FOR NO KEY UPDATE) and requires it
 * unrevoked: every end of a family locks that row too, so a rotation and an end are
 * serialised (an end waits for a rotation in flight and then revokes its successor; a
 * rotation waiting behind an end finds the family revoked). Then the presented token is
 * marked rotated only if it is current, unexpired, issued to this client with this
 * credential, within an active grant that is not newer than it (an expired grant granted
 * again starts afresh) and still delegates every resource and scope of the family
 * (`familyDelegated`), and covers the narrowing asked for; its successor is inserted from
 * the same row, bound to the same DPoP key as the family (RFC 9449 §5). Concurrent
 * presentations meet at the family row: the first rotates, the others re-check the token,
 * find it rotated and insert nothing.
 */
const ROTATE = `WITH family AS (
    SELECT f.id, f.resource_keys FROM refresh_token_families f
     WHERE f.id = (SELECT family_id FROM refresh_tokens WHERE token_sha256 = $1) AND f.revoked_at IS NULL
       FOR NO KEY UPDATE),
  current AS (
    UPDATE refresh_tokens r SET rotated_at = $2
      FROM family f, grants g
     WHERE r.token_sha256 = $1 AND r.family_id = f.id AND r.agent_id = $3 AND r.client_id_url IS NOT DISTINCT FROM $4::text AND r.credential_sha256 IS NOT DISTINCT FROM $5::bytea
       AND r.rotated_at IS NULL AND r.revoked_at IS NULL AND r.idle_expires_at > $2 AND r.family_expires_at > $2
       AND g.id = r.grant_id AND ${active(2)} AND g.created_at <= r.issued_at AND ${familyDelegated('r', 'f', 'g')}
       AND ($6::jsonb IS NULL OR r.scopes @> $6::jsonb) AND ($7::text IS NULL OR r.resources @> jsonb_build_array($7::text))
       AND (r.dpop_jkt IS NULL OR r.dpop_jkt = $11::text)
    RETURNING r.*)
  INSERT INTO refresh_tokens (id, family_id, token_sha256, agent_id, principal, grant_id, resources, scopes, credential_sha256, client_id_url, dpop_jkt, issued_at, idle_expires_at, family_expires_at)
  SELECT $8, family_id, $9, agent_id, principal, grant_id, resources, scopes, credential_sha256, client_id_url, dpop_jkt, $2, LEAST($10::timestamptz, family_expires_at), family_expires_at FROM current
  RETURNING *`;

/**
 * The successor a token was rotated into, for a presentation within the reuse grace: current,
 * unexpired, its family unrevoked (the family row and the successor held FOR SHARE: a rotation
 * of the successor in flight is waited for and then excludes it, and no end of the family
 * commits before this transaction), and its grant still active and delegating.
 */
const GRACE_SUCCESSOR = `SELECT r.*, array_position($2::text[], encode(r.token_sha256, 'hex')) AS candidate
  FROM refresh_tokens r JOIN refresh_token_families f ON f.id = r.family_id JOIN grants g ON g.id = r.grant_id
 WHERE r.family_id = $1 AND r.token_sha256 = ANY(ARRAY(SELECT decode(h, 'hex') FROM unnest($2::text[]) AS h)) AND f.revoked_at IS NULL
   AND r.rotated_at IS NULL AND r.revoked_at IS NULL AND r.idle_expires_at > $3 AND r.family_expires_at > $3
   AND ${active(3)} AND g.created_at <= r.issued_at AND ${familyDelegated('r', 'f', 'g')}
   FOR SHARE OF f, r`;

const sameBytes = (a: Buffer | null, b: Buffer | null): boolean => (a === null || b === null ? a === b : a.equals(b));

/**
 * Refresh tokens of the local authorization server, rotated on every use (OAuth 2.1 §4.3.1).
 * Rotation is one statement (`ROTATE`): concurrent presentations of one token, on any
 * replica, meet at its row and exactly one rotates it. A presentation of a token that was
 * already rotated is a reuse (RFC 9700 §4.14.2): the whole family is revoked, so of two
 * racing presentations one gets tokens and then finds them ended too (docs/oauth2.md "Token
 * lifecycle": a client presents each refresh token once).
 */
@Injectable()
export class RefreshTokenRepository {
  /** The rotation: the refresh grant's one statement, prepared once per PostgreSQL connection. */
  private readonly rotation: (values: readonly unknown[]) => Promise<Row[]>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rotation = preparedQuery<Row>(dataSource, 'broker_refresh_token_rotation', ROTATE);
  }

  /** Stores the first token of a new family. */
  async issue(token: NewRefreshFamily, manager: EntityManager = this.dataSource.manager): Promise<RefreshTokenRecord> {
    // The family row and its first token in one statement: no token without its family.
    const rows = await manager.query<Row[]>(
      `WITH family AS (INSERT INTO refresh_token_families (id, resource_keys, family_expires_at) VALUES ($2, $15, $13))
       INSERT INTO refresh_tokens (id, family_id, token_sha256, agent_id, principal, grant_id, resources, scopes, credential_sha256, client_id_url, issued_at, idle_expires_at, family_expires_at, dpop_jkt)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, LEAST($12::timestamptz, $13::timestamptz), $13, $14) RETURNING *`,
      [
        token.id,
        token.familyId,
        token.tokenSha256,
        token.agentId,
        token.principal,
        token.grantId,
        JSON.stringify(token.resources),
        JSON.stringify(token.scopes),
        token.credentialSha256,
        token.clientIdUrl,
        token.issuedAt,
        token.idleExpiresAt,
        token.familyExpiresAt,
        token.dpopJkt,
        JSON.stringify(token.resources.map((uri) => normaliseResourceUri(uri) ?? uri)),
      ],
    );
    return toRecord(rows[0] as Row);
  }

  /** The agent a token was issued to, and its document URL (to resolve a metadata-document client before presenting). */
  async holderOf(tokenSha256: Buffer): Promise<{ agentId: string; clientIdUrl: string | null } | undefined> {
    const rows = await this.dataSource.query<Pick<Row, 'agent_id' | 'client_id_url'>[]>(
      'SELECT agent_id, client_id_url FROM refresh_tokens WHERE token_sha256 = $1',
      [tokenSha256],
    );
    const row = rows[0];
    return row === undefined ? undefined : { agentId: row.agent_id, clientIdUrl: row.client_id_url };
  }

  /**
   * Presents a refresh token (OAuth 2.1 §4.3.1: rotated on every use): one statement when it
   * is good; otherwise one more read says why, and a token already rotated is a reuse (RFC
   * 9700 §4.14.2): its whole family is revoked.
   */
  async rotate(presented: RefreshPresentation): Promise<RotationOutcome> {
    const { now, successor } = presented;
    const rows = await this.rotation([
      presented.tokenSha256,
      now,
      presented.agentId,
      presented.clientIdUrl,
      presented.credentialSha256,
      presented.scopes === undefined ? null : JSON.stringify(presented.scopes),
      presented.resource ?? null,
      successor.id,
      successor.tokenSha256,
      successor.idleExpiresAt,
      presented.dpopJkt,
    ]);
    const row = rows[0];
    if (row !== undefined) return { outcome: 'rotated', successor: toRecord(row) };
    return this.refusal(presented);
  }

  /** Why `presented` was not rotated (the slow path: only refusals pay for it), or its successor within the reuse grace. */
  private async refusal(presented: RefreshPresentation): Promise<RotationOutcome> {
    const { now } = presented;
    const found = (
      await this.dataSource.query<
        (Row & {
          grant_active: boolean | null;
          grant_created_at: Date | null;
          family_revoked: boolean | null;
          delegated: boolean | null;
        })[]
      >(
        `SELECT r.*, ${active(2)} AS grant_active, g.created_at AS grant_created_at,
                f.revoked_at IS NOT NULL AS family_revoked, ${familyDelegated('r', 'f', 'g')} AS delegated
           FROM refresh_tokens r LEFT JOIN grants g ON g.id = r.grant_id LEFT JOIN refresh_token_families f ON f.id = r.family_id
          WHERE r.token_sha256 = $1`,
        [presented.tokenSha256, now],
      )
    )[0];
    if (found === undefined) return { outcome: 'refused', reason: 'unknown' };
    const record = toRecord(found);
    const refused = (reason: RefreshRefusal): RotationOutcome => ({ outcome: 'refused', reason, record });
    // RFC 6749 §6: bound to the client it was issued to; another client's presentation changes nothing.
    if (found.agent_id !== presented.agentId || found.client_id_url !== presented.clientIdUrl) return refused('client');
    // RFC 9449 §5: a bound token is the key holder's; a presentation without that key changes nothing (not even a reuse).
    if (found.dpop_jkt !== null && found.dpop_jkt !== presented.dpopJkt) return refused('key');
    if (found.revoked_at !== null || found.family_revoked !== false) return refused('inactive');
    if (found.rotated_at !== null) {
      const replayed = await this.withinGrace(found, presented);
      if (replayed !== undefined) return replayed;
      // Of racing presentations, the one whose revocation ended the family reports the reuse (one event).
      return (await this.revokeFamily(found.family_id, now))
        ? { outcome: 'reused', previous: record }
        : refused('inactive');
    }
    if (found.idle_expires_at.getTime() <= now.getTime() || found.family_expires_at.getTime() <= now.getTime())
      return refused('inactive');
    if (!sameBytes(found.credential_sha256, presented.credentialSha256)) return refused('credential');
    if (found.grant_active !== true || (found.grant_created_at as Date).getTime() > found.issued_at.getTime())
      return refused('grant');
    if (found.delegated !== true) return refused('delegation');
    if (presented.scopes !== undefined && !presented.scopes.every((scope) => found.scopes.includes(scope)))
      return refused('scope');
    if (presented.resource !== undefined && !found.resources.includes(presented.resource)) return refused('resource');
    // Changed between the two reads (rotated or revoked meanwhile): nothing was rotated for this presentation.
    return refused('inactive');
  }

  /**
   * The reuse grace: `found` (rotated) presented again by the client it was issued to, with its credential, at most
   * `grace.windowMs` after its rotation, gets the successor it was rotated into while that one is still current; never
   * a second successor (so never a second branch of the family). Undefined: not within the grace.
   */
  private async withinGrace(found: Row, presented: RefreshPresentation): Promise<RotationOutcome | undefined> {
    const grace = presented.grace;
    if (grace === undefined || grace.windowMs <= 0 || grace.successors.length === 0 || found.rotated_at === null)
      return undefined;
    if (presented.now.getTime() - found.rotated_at.getTime() > grace.windowMs) return undefined;
    if (!sameBytes(found.credential_sha256, presented.credentialSha256)) return undefined;
    const rows = await this.dataSource.transaction((manager) =>
      manager.query<(Row & { candidate: number })[]>(GRACE_SUCCESSOR, [
        found.family_id,
        grace.successors.map((digest) => digest.toString('hex')),
        presented.now,
      ]),
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { outcome: 'rotated', successor: toRecord(row), replayed: row.candidate - 1 };
  }

  /**
   * Revokes every token of the family (`endFamilies`); true when it was still live. Safe
   * against a rotation in flight: its successor is revoked too.
   */
  async revokeFamily(familyId: string, now: Date, manager?: EntityManager): Promise<boolean> {
    const ended = await endFamilies(manager ?? this.dataSource.manager, 'SELECT $2::uuid', [familyId], now);
    return ended > 0;
  }

  /** The live family of the token whose SHA-256 is `tokenSha256`, if issued to `agentId` (RFC 7009: a client revokes only its own). */
  async familyOf(tokenSha256: Buffer, agentId: string): Promise<string | undefined> {
    const rows = await this.dataSource.query<{ family_id: string }[]>(
      'SELECT family_id FROM refresh_tokens WHERE token_sha256 = $1 AND agent_id = $2',
      [tokenSha256, agentId],
    );
    return rows[0]?.family_id;
  }

  /** Per agent, the person's families still usable at `now` (never a token): a current token within an active grant not newer than it. */
  async liveFamiliesByAgent(principal: string, now: Date): Promise<Map<string, number>> {
    const rows = await this.dataSource.query<{ agent_id: string; families: number }[]>(
      `SELECT g.agent_id, count(DISTINCT r.family_id)::int AS families
         FROM grants g JOIN refresh_tokens r ON r.grant_id = g.id
        WHERE g.principal = $1 AND r.rotated_at IS NULL AND r.revoked_at IS NULL AND r.idle_expires_at > $2 AND r.family_expires_at > $2
          AND ${active(2)} AND g.created_at <= r.issued_at
        GROUP BY g.agent_id`,
      [principal, now],
    );
    return new Map(rows.map((r) => [r.agent_id, r.families]));
  }

  /**
   * Deletes up to `batch` tokens of families whose absolute expiry passed before `cutoff`
   * (nothing of such a family can be used or reused any more); how many went. Hourly work
   * (`RefreshTokenRetention`), so it scans rather than adding an index every refresh would pay for.
   */
  async purgeEnded(cutoff: Date, batch: number): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM refresh_tokens WHERE id IN (SELECT id FROM refresh_tokens WHERE family_expires_at < $1 LIMIT $2)',
      [cutoff, batch],
    );
    // A family row goes with its last token (or with its grant's deletion, which deleted its tokens).
    await this.dataSource.query(
      `DELETE FROM refresh_token_families WHERE id IN (
         SELECT f.id FROM refresh_token_families f
          WHERE f.family_expires_at < $1 AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = f.id) LIMIT $2)`,
      [cutoff, batch],
    );
    return count;
  }
}
