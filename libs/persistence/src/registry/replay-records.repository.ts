import type { DataSource } from 'typeorm';
import { preparedQuery } from '../prepared-query';

/** Expired records each claim removes on its way (never the one it claims). */
export const REPLAY_PURGE_PER_CLAIM = 2;

/**
 * One statement per claim: the `jti` is recorded unless a record of it is still live. A
 * record that outlived its proof or assertion is taken over (a new one may reuse an old `jti`
 * once the old one can no longer be accepted). Concurrent claims of one `jti`, on any replica,
 * meet at the primary key: exactly one sees its row returned. On the way, the claim deletes up
 * to `REPLAY_PURGE_PER_CLAIM` expired records (oldest first, through the `expires_at` index,
 * skipping rows another claim holds), so the table holds the live records plus at most what
 * the last quiet period left, without a timer.
 */
const claimStatement = (table: ReplayTable): string => `WITH purged AS (
  DELETE FROM ${table} WHERE jti_sha256 IN (
    SELECT jti_sha256 FROM ${table} WHERE expires_at <= $3 AND jti_sha256 <> $1
     ORDER BY expires_at LIMIT ${REPLAY_PURGE_PER_CLAIM} FOR UPDATE SKIP LOCKED))
INSERT INTO ${table} (jti_sha256, expires_at) VALUES ($1, $2)
ON CONFLICT (jti_sha256) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE ${table}.expires_at <= $3
RETURNING 1 AS claimed`;

/** The tables of single-use records, each `(jti_sha256 bytea PRIMARY KEY, expires_at)` with an index on `expires_at`. */
type ReplayTable = 'client_assertion_replays' | 'dpop_proof_replays';

/**
 * A replay record in the database, so every replica shares it: a `jti` (as a SHA-256) is
 * accepted once until `expiresAt`. Prepared once per pooled connection on PostgreSQL
 * (`preparedQuery`).
 */
abstract class SingleUseRecord {
  private readonly claim: (values: readonly unknown[]) => Promise<{ claimed: number }[]>;

  protected constructor(dataSource: DataSource, table: ReplayTable) {
    this.claim = preparedQuery<{ claimed: number }>(dataSource, `broker_claim_${table}`, claimStatement(table));
  }

  /** True when this is the first use of `jtiSha256` still live at `now`; the record lasts until `expiresAt`. */
  async claimFirstUse(jtiSha256: Buffer, expiresAt: Date, now: Date): Promise<boolean> {
    return (await this.claim([jtiSha256, expiresAt, now])).length === 1;
  }
}

/**
 * The gateway's client assertions (RFC 7523 §3, `token_exchange.client_assertion.single_use`):
 * each `jti` once while its assertion could be accepted.
 */
export class ClientAssertionReplayRepository extends SingleUseRecord {
  constructor(dataSource: DataSource) {
    super(dataSource, 'client_assertion_replays');
  }
}

/** DPoP proofs (RFC 9449 §11.1): each key's `jti` once while its proof could be accepted, on every replica. */
export class DpopProofReplayRepository extends SingleUseRecord {
  constructor(dataSource: DataSource) {
    super(dataSource, 'dpop_proof_replays');
  }
}
