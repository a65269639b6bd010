import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { preparedQuery } from '../prepared-query';
import { assertionClaim } from './replay-records.repository';
import type { WithinTransaction } from '../within-transaction';

/** A token the Identity Assertion JWT Authorization Grant is about to issue, as its authorization records it. */
export interface EnterpriseIssue {
  /** The id a new row takes (a live row keeps its own). */
  readonly candidateId: string;
  readonly principal: string;
  readonly agentId: string;
  /** The trusted issuer (the enterprise IdP) that signed the assertion. */
  readonly issuer: string;
  readonly resourceUri: string;
  readonly scopes: readonly string[];
  readonly now: Date;
  /** The token's `exp`: the row is live until its last token expires. */
  readonly expiresAt: Date;
  /**
   * When the assertion was issued at the earliest (its `iat` less the clock leeway its verifier
   * grants the issuer): one that may have been issued before the pairing's last revocation buys nothing.
   */
  readonly assertionIssuedAt: Date;
  /** The SHA-256 naming the assertion's `jti` (with its issuer) among single-use assertions, and until when it is kept. */
  readonly assertionSha256: Buffer;
  readonly spentUntil: Date;
}

/** What recording a token did: its authorization's id, or why there is none. */
export type RecordOutcome =
  | { readonly outcome: 'recorded'; readonly id: string }
  | { readonly outcome: 'replayed' }
  | { readonly outcome: 'revoked' };

/** An enterprise authorization as stored: what one person's organisation allowed one agent for one resource. */
export interface EnterpriseAuthorization {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly issuer: string;
  readonly resourceUri: string;
  readonly scopes: readonly string[];
  readonly firstIssuedAt: Date;
  readonly lastIssuedAt: Date;
  /** The last token's `exp`: live until then unless revoked. */
  readonly expiresAt: Date;
  readonly revokedAt: Date | null;
  /** The principal of whoever revoked it: the person, or an administrator (the ledger event says which). */
  readonly revokedBy: string | null;
}

/** A live enterprise authorization as the person's and the admin's lists show it. */
export interface EnterpriseAuthorizationView extends EnterpriseAuthorization {
  readonly agentDisplayName: string;
  readonly agentLogoUrl: string | null;
  /** The registered protected resource's name; null when none is registered at `resourceUri` any more. */
  readonly resourceDisplayName: string | null;
  /** The scopes the registered protected resource offers, with their descriptions (empty when none is registered). */
  readonly resourceScopes: readonly { readonly scope: string; readonly description: string }[];
}

/** Whose live authorizations: a person's, an agent's, or both at once. */
export interface EnterpriseAuthorizationOwner {
  readonly principal?: string;
  readonly agentId?: string;
}

interface AuthorizationRow {
  id: string;
  principal: string;
  agent_id: string;
  issuer: string;
  resource_uri: string;
  scopes: string[];
  first_issued_at: Date;
  last_issued_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  revoked_by: string | null;
}

interface ViewRow extends AuthorizationRow {
  agent_display_name: string;
  agent_logo_url: string | null;
  resource_display_name: string | null;
  resource_scopes: { scope: string; description: string }[] | null;
}

/** "Live": not revoked and its last token not expired (compared in SQL with the caller's clock). */
const LIVE = 'e.revoked_at IS NULL AND e.expires_at > $1';

/**
 * The owner as conditions on alias `e`, numbered after the first `offset` parameters: only
 * the columns given, so each read is one equality the indexes serve (the live unique index
 * leads with the principal; the agent index).
 */
function ownedBy(owner: EnterpriseAuthorizationOwner, offset: number): { sql: string; values: unknown[] } {
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (owner.principal !== undefined) {
    values.push(owner.principal);
    conditions.push(`e.principal = $${offset + values.length}`);
  }
  if (owner.agentId !== undefined) {
    values.push(owner.agentId);
    conditions.push(`e.agent_id = $${offset + values.length}`);
  }
  return { sql: conditions.map((condition) => ` AND ${condition}`).join(''), values };
}

/**
 * One statement, one commit: the assertion's `jti` is spent (`assertionClaim`, single use on
 * every replica) and, if it was a first use, the live row of (person, agent, issuer, resource)
 * is created or extended, unless the assertion may have been issued before the last revocation
 * of that pairing (`assertionIssuedAt`, its earliest issue, not after it). Two concurrent first tokens meet at the partial unique index; both get the one row.
 */
const RECORD = `WITH ${assertionClaim('$10::bytea', '$11::timestamptz', '$7::timestamptz')},
recorded AS (
  INSERT INTO enterprise_authorizations
    (id, principal, agent_id, issuer, resource_uri, scopes, first_issued_at, last_issued_at, expires_at)
  SELECT $1::uuid, $2::varchar, $3::uuid, $4::text, $5::text, $6::jsonb, $7::timestamptz, $7::timestamptz, $8::timestamptz
   WHERE EXISTS (SELECT 1 FROM claimed)
     AND NOT EXISTS (SELECT 1 FROM enterprise_authorizations
                      WHERE principal = $2::varchar AND agent_id = $3::uuid AND issuer = $4::text AND resource_uri = $5::text
                        AND revoked_at IS NOT NULL AND revoked_at >= $9::timestamptz)
  ON CONFLICT (principal, agent_id, issuer, resource_uri) WHERE revoked_at IS NULL DO UPDATE
    SET last_issued_at = EXCLUDED.last_issued_at, scopes = EXCLUDED.scopes,
        expires_at = GREATEST(enterprise_authorizations.expires_at, EXCLUDED.expires_at)
  RETURNING id)
SELECT EXISTS (SELECT 1 FROM claimed) AS claimed, (SELECT id FROM recorded) AS id`;

/**
 * What a person's organisation allowed an agent through an enterprise IdP's assertions
 * (docs/oauth2.md "Enterprise-managed authorization"): the `sid` of the tokens issued that way,
 * which introspection reads and revocation ends.
 */
@Injectable()
export class EnterpriseAuthorizationRepository {
  private readonly recordStatement: (values: readonly unknown[]) => Promise<{ claimed: boolean; id: string | null }[]>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.recordStatement = preparedQuery<{ claimed: boolean; id: string | null }>(
      dataSource,
      'broker_record_enterprise_authorization',
      RECORD,
    );
  }

  /**
   * Spends the assertion and records the token's authorization: its id (the token's `sid`);
   * `replayed` when the assertion was presented before, `revoked` when it may have been issued
   * before a revocation of this access (then it is spent all the same).
   */
  async record(issue: EnterpriseIssue): Promise<RecordOutcome> {
    const [row] = await this.recordStatement([
      issue.candidateId,
      issue.principal,
      issue.agentId,
      issue.issuer,
      issue.resourceUri,
      JSON.stringify(issue.scopes),
      issue.now,
      issue.expiresAt,
      issue.assertionIssuedAt,
      issue.assertionSha256,
      issue.spentUntil,
    ]);
    if (row?.claimed !== true) return { outcome: 'replayed' };
    return row.id === null ? { outcome: 'revoked' } : { outcome: 'recorded', id: row.id };
  }

  /**
   * The live authorizations of a person and/or an agent, newest `last_issued_at` first, with the
   * agent's name and logo and the registered protected resource's name (null when the resource URI
   * is no longer registered).
   */
  async live(owner: EnterpriseAuthorizationOwner, now: Date): Promise<EnterpriseAuthorizationView[]> {
    const filter = ownedBy(owner, 1);
    const rows = await this.dataSource.query<ViewRow[]>(
      `SELECT e.*, a.display_name AS agent_display_name, a.logo_url AS agent_logo_url,
              r.display_name AS resource_display_name, r.scopes AS resource_scopes
         FROM enterprise_authorizations e
         JOIN agents a ON a.id = e.agent_id
         LEFT JOIN protected_resources r ON r.resource_uri = e.resource_uri
        WHERE ${LIVE}${filter.sql}
        ORDER BY e.last_issued_at DESC, e.id ASC`,
      [now, ...filter.values],
    );
    return rows.map((row) => ({
      ...toAuthorization(row),
      agentDisplayName: row.agent_display_name,
      agentLogoUrl: row.agent_logo_url,
      resourceDisplayName: row.resource_display_name,
      resourceScopes: (row.resource_scopes ?? []).map((s) => ({ scope: s.scope, description: s.description })),
    }));
  }

  /**
   * Revokes the live authorization `id` when it belongs to `owner` (every field given must match):
   * its tokens stop being active (RFC 7662) on every replica once this commits (the table's trigger
   * notifies `token_revoked`; the caller tells this process's `TokenStateRepository.familyRevoked`).
   * `within` (the revocation's event) runs in the same transaction. The revoked row, or undefined
   * when no live authorization of that owner has this id.
   */
  async revoke(
    id: string,
    owner: EnterpriseAuthorizationOwner,
    revokedBy: string,
    now: Date,
    within?: WithinTransaction<EnterpriseAuthorization>,
  ): Promise<EnterpriseAuthorization | undefined> {
    const filter = ownedBy(owner, 3);
    return this.dataSource.transaction(async (manager) => {
      const [rows] = await manager.query<[AuthorizationRow[], number]>(
        `UPDATE enterprise_authorizations e SET revoked_at = $1, revoked_by = $3
          WHERE e.id = $2 AND ${LIVE}${filter.sql}
          RETURNING e.*`,
        [now, id, revokedBy, ...filter.values],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const revoked = toAuthorization(row);
      await within?.(revoked, manager);
      return revoked;
    });
  }
}

function toAuthorization(row: AuthorizationRow): EnterpriseAuthorization {
  return {
    id: row.id,
    principal: row.principal,
    agentId: row.agent_id,
    issuer: row.issuer,
    resourceUri: row.resource_uri,
    scopes: row.scopes,
    firstIssuedAt: row.first_issued_at,
    lastIssuedAt: row.last_issued_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokedBy: row.revoked_by,
  };
}
