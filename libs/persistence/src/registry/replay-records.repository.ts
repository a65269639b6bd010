import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { preparedQuery } from '../prepared-query';

/** Expired records each claim removes on its way (never the one it claims). */
export const REPLAY_PURGE_PER_CLAIM = 2;

/**
 * One statement per claim (`token_exchange.client_assertion.single_use`): the `jti` is
 * recorded unless a record of it is still live. A record that outlived its assertion is taken
 * over (a new assertion may reuse an old `jti` once the old one can no longer be accepted).
 * Concurrent claims of one `jti`, on any replica, meet at the primary key: exactly one sees its
 * row returned. On the way, the claim deletes up to `REPLAY_PURGE_PER_CLAIM` expired records
 * (oldest first, through the `expires_at` index, skipping rows another claim holds), so the
 * table holds the live records plus at most what the last quiet period left, without a timer.
 */
const CLAIM = `WITH ${assertionClaim('$1', '$2', '$3')}
SELECT 1 AS claimed FROM claimed`;

/**
 * The claim as two CTEs, `purged` and `claimed` (one row when it is a first use), with the
 * statement's parameters for the digest, the record's expiry and now: also part of the
 * enterprise authorization's record (`EnterpriseAuthorizationRepository`), which spends an
 * identity assertion's `jti` in the statement that uses it.
 */
export function assertionClaim(jtiSha256: string, expiresAt: string, now: string): string {
  return `purged AS (
  DELETE FROM client_assertion_replays WHERE jti_sha256 IN (
    SELECT jti_sha256 FROM client_assertion_replays WHERE expires_at <= ${now} AND jti_sha256 <> ${jtiSha256}
     ORDER BY expires_at LIMIT ${REPLAY_PURGE_PER_CLAIM} FOR UPDATE SKIP LOCKED)),
claimed AS (
  INSERT INTO client_assertion_replays (jti_sha256, expires_at) VALUES (${jtiSha256}, ${expiresAt})
  ON CONFLICT (jti_sha256) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE client_assertion_replays.expires_at <= ${now}
  RETURNING 1)`;
}

/**
 * The replay record of the gateway's client assertions (RFC 7523 §3), in the database so
 * every replica shares it: an assertion's `jti` (as its SHA-256) is accepted once until
 * `expiresAt`. Prepared once per pooled connection on PostgreSQL (`preparedQuery`).
 */
@Injectable()
export class ClientAssertionReplayRepository {
  private readonly claim: (values: readonly unknown[]) => Promise<{ claimed: number }[]>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.claim = preparedQuery<{ claimed: number }>(dataSource, 'broker_claim_assertion_jti', CLAIM);
  }

  /** True when this is the first use of `jtiSha256` still live at `now`; the record lasts until `expiresAt`. */
  async claimFirstUse(jtiSha256: Buffer, expiresAt: Date, now: Date): Promise<boolean> {
    return (await this.claim([jtiSha256, expiresAt, now])).length === 1;
  }
}

/** Claims in one statement at most: a larger backlog goes in the next statements. */
export const DPOP_CLAIMS_PER_STATEMENT = 500;

/**
 * Claims many `jti`s at once: those returned were first uses. The statement's own transaction
 * commits without waiting for the WAL flush (`synchronous_commit` off for it alone): the claims
 * are committed, and visible to every other session (every replica refuses them from then on),
 * before the answer; only a crash of PostgreSQL itself within a fraction of a second of a claim
 * could lose it, and then only a record that expires within `proof_max_age` anyway. Expired
 * records are not purged here but by `DpopProofReplayRetention` (a purge per claim scans the
 * dead rows of the previous purges: most of a claim's cost at a thousand claims a second).
 */
const CLAIM_MANY = `WITH commit_mode AS (SELECT set_config('synchronous_commit', 'off', true) AS mode)
INSERT INTO dpop_proof_replays (jti_sha256, expires_at)
SELECT decode(claim.jti, 'hex'), claim.expires_at FROM unnest($1::text[], $2::timestamptz[]) AS claim(jti, expires_at), commit_mode
ON CONFLICT (jti_sha256) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE dpop_proof_replays.expires_at <= $3
RETURNING encode(jti_sha256, 'hex') AS jti`;

interface PendingClaim {
  readonly jti: string;
  readonly expiresAt: Date;
  readonly now: Date;
  readonly resolve: (first: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * DPoP proofs (RFC 9449 §11.1): each key's `jti` once while its proof could be accepted (a
 * minute by default), on every replica. Every DPoP token request claims one, so claims made
 * while a statement is on its way wait for it and go together in the next one (a single claim
 * goes at once): under load one statement carries many, and each is still committed before its
 * request is answered (docs/decisions/0029-dpop.md).
 */
@Injectable()
export class DpopProofReplayRepository {
  private readonly claimMany: (values: readonly unknown[]) => Promise<{ jti: string }[]>;
  private queue: PendingClaim[] = [];
  private inFlight = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.claimMany = preparedQuery<{ jti: string }>(dataSource, 'broker_claim_dpop_proofs', CLAIM_MANY);
  }

  /** True when this is the first use of `jtiSha256` still live at `now`; the record lasts until `expiresAt`. */
  claimFirstUse(jtiSha256: Buffer, expiresAt: Date, now: Date): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ jti: jtiSha256.toString('hex'), expiresAt, now, resolve, reject });
      if (!this.inFlight) void this.flush();
    });
  }

  /** Deletes up to `batch` records expired before `cutoff`; how many went. */
  async purgeExpired(cutoff: Date, batch: number): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM dpop_proof_replays WHERE jti_sha256 IN (
         SELECT jti_sha256 FROM dpop_proof_replays WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [cutoff, batch],
    );
    return count;
  }

  private async flush(): Promise<void> {
    this.inFlight = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, DPOP_CLAIMS_PER_STATEMENT);
      // One row per jti in a statement (ON CONFLICT cannot touch a row twice): a repeat in the batch is a replay.
      const first = new Map<string, PendingClaim>();
      const repeats: PendingClaim[] = [];
      for (const claim of batch) {
        if (first.has(claim.jti)) repeats.push(claim);
        else first.set(claim.jti, claim);
      }
      const claims = [...first.values()];
      try {
        const rows = await this.claimMany([
          claims.map((claim) => claim.jti),
          claims.map((claim) => claim.expiresAt),
          // The earliest `now` of the batch: a record is taken over only when it has expired for every claim.
          new Date(Math.min(...claims.map((claim) => claim.now.getTime()))),
        ]);
        const won = new Set(rows.map((row) => row.jti));
        for (const claim of claims) claim.resolve(won.has(claim.jti));
        for (const repeat of repeats) repeat.resolve(false);
      } catch (error) {
        for (const claim of batch) claim.reject(error);
      }
    }
    this.inFlight = false;
  }
}
