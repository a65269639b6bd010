import type { DataSource } from 'typeorm';
import { preparedQuery } from '../prepared-query';

/** Expired records each claim removes on its way (never the one it claims). */
export const REPLAY_PURGE_PER_CLAIM = 2;

/**
 * One statement per claim (`token_exchange.client_assertion.single_use`):
 * the `jti` is recorded unless a record of it is still live. A record that outlived its
 * assertion is taken over (a new assertion may reuse an old `jti` once the old one can no
 * longer be accepted). Concurrent claims of one `jti`, on any replica, meet at the primary
 * key: exactly one sees its row returned. On the way, the claim deletes up to
 * `REPLAY_PURGE_PER_CLAIM` expired records (oldest first, through the `expires_at` index,
 * skipping rows another claim holds), so the table holds the live records plus at most what
 * the last quiet period left, without a timer.
 */
const CLAIM = `WITH purged AS (
  DELETE FROM client_assertion_replays WHERE jti_sha256 IN (
    SELECT jti_sha256 FROM client_assertion_replays WHERE expires_at <= $3 AND jti_sha256 <> $1
     ORDER BY expires_at LIMIT ${REPLAY_PURGE_PER_CLAIM} FOR UPDATE SKIP LOCKED))
INSERT INTO client_assertion_replays (jti_sha256, expires_at) VALUES ($1, $2)
ON CONFLICT (jti_sha256) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE client_assertion_replays.expires_at <= $3
RETURNING 1 AS claimed`;

/**
 * The replay record of the gateway's client assertions (RFC 7523 §3), in the database so
 * every replica shares it: an assertion's `jti` (as its SHA-256) is accepted once until
 * `expiresAt`. Prepared once per pooled connection on PostgreSQL (`preparedQuery`).
 */
export class ClientAssertionReplayRepository {
  private readonly claim: (values: readonly unknown[]) => Promise<{ claimed: number }[]>;

  constructor(dataSource: DataSource) {
    this.claim = preparedQuery<{ claimed: number }>(dataSource, 'broker_claim_assertion_jti', CLAIM);
  }

  /** True when this is the first use of `jtiSha256` still live at `now`; the record lasts until `expiresAt`. */
  async claimFirstUse(jtiSha256: Buffer, expiresAt: Date, now: Date): Promise<boolean> {
    return (await this.claim([jtiSha256, expiresAt, now])).length === 1;
  }
}
