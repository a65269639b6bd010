import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** A delivery a worker claimed: what to send, where, and the sealed secret to sign it with. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  /** The payload as stored (jsonb's text form): the exact body sent and signed. */
  readonly body: string;
  /** Attempts including this one. */
  readonly attempts: number;
  readonly createdAt: Date;
  readonly url: string;
  readonly secretEnvelope: Buffer;
}

/**
 * What a claim takes: deliveries due by `now`, leased until `leaseUntil`, at most `limit`,
 * and no webhook past `perWebhook` attempts in flight (its leased rows, every process's).
 */
export interface DeliveryClaim {
  readonly now: Date;
  readonly leaseUntil: Date;
  readonly limit: number;
  readonly perWebhook: number;
}

/** How an attempt ended. */
export type AttemptOutcome =
  | { readonly kind: 'delivered'; readonly status: number; readonly at: Date }
  | { readonly kind: 'retry'; readonly status: number | null; readonly error: string; readonly nextAttemptAt: Date }
  | { readonly kind: 'failed'; readonly status: number | null; readonly error: string };

interface ClaimRow {
  id: string;
  webhook_id: string;
  event_id: string;
  body: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret_envelope: Buffer;
}

/**
 * Claims due deliveries per webhook (README "Webhooks"). Each enabled webhook with due rows
 * is locked for the statement (`FOR NO KEY UPDATE SKIP LOCKED`: concurrent claims by replicas
 * or cluster workers take turns per webhook, and the outbox's inserts, which only take
 * `FOR KEY SHARE` for the foreign key, are not held up); it gives at most `perWebhook` minus
 * its rows leased right now, oldest due first. Of all those, the rows of the webhooks with
 * the fewest attempts in flight go first (a receiver's second attempt comes after every
 * other receiver's first), then by due time, at most `limit`. A claim leases the row
 * (`claimed_until`) and counts the attempt; `next_attempt_at` stays the due time, so a
 * worker that dies mid-attempt loses nothing: the row is claimable again when the lease
 * lapses (at-least-once). The final `WHERE` is checked again on the row as it is when the
 * update takes its lock, so a row that was recorded meanwhile is not claimed.
 */
const CLAIM_SQL = `
WITH hooks AS (
  SELECT w.id FROM webhooks w
   WHERE w.enabled
     AND EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.webhook_id = w.id AND p.status = 'pending' AND p.next_attempt_at <= $1)
   FOR NO KEY UPDATE OF w SKIP LOCKED
), candidates AS (
  SELECT c.id, c.next_attempt_at, busy.n + c.rank AS position
    FROM hooks h
   CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM webhook_deliveries q WHERE q.webhook_id = h.id AND q.claimed_until > $1 AND q.status = 'pending') busy
   CROSS JOIN LATERAL (
     SELECT dd.id, dd.next_attempt_at, row_number() OVER (ORDER BY dd.next_attempt_at, dd.id) AS rank
       FROM webhook_deliveries dd
      WHERE dd.webhook_id = h.id AND dd.status = 'pending' AND dd.next_attempt_at <= $1 AND (dd.claimed_until IS NULL OR dd.claimed_until <= $1)
      ORDER BY dd.next_attempt_at, dd.id
      LIMIT GREATEST($4::int - busy.n, 0)) c
), due AS (
  SELECT id FROM candidates ORDER BY position, next_attempt_at, id LIMIT $3
)
UPDATE webhook_deliveries d SET claimed_until = $2, attempts = d.attempts + 1
  FROM due, webhooks w
 WHERE d.id = due.id AND w.id = d.webhook_id AND d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
RETURNING d.id, d.webhook_id, d.event_id, d.payload::text AS body, d.attempts, d.created_at, w.url, w.secret_envelope`;

/** A finished attempt gives its lease back; only the claim that made it (its attempt number) may record it. */
const OWNED = "id = $1 AND attempts = $2 AND status = 'pending'";

/** The webhook outbox's worker side (claim, then record how the attempt ended). */
@Injectable()
export class WebhookDeliveryRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async claimDue(claim: DeliveryClaim): Promise<ClaimedDelivery[]> {
    const [rows] = await this.dataSource.query<[ClaimRow[], number]>(CLAIM_SQL, [
      claim.now,
      claim.leaseUntil,
      claim.limit,
      claim.perWebhook,
    ]);
    return rows.map((row) => ({
      id: row.id,
      webhookId: row.webhook_id,
      eventId: row.event_id,
      body: row.body,
      attempts: row.attempts,
      createdAt: row.created_at,
      url: row.url,
      secretEnvelope: row.secret_envelope,
    }));
  }

  /**
   * Records how the claimed attempt ended. Only that claim's own record lands: a row recorded
   * meanwhile, or claimed again after its lease lapsed, is left as it is.
   */
  async record(delivery: Pick<ClaimedDelivery, 'id' | 'attempts'>, outcome: AttemptOutcome): Promise<void> {
    const { id, attempts } = delivery;
    switch (outcome.kind) {
      case 'delivered':
        await this.dataSource.query(
          `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $3, last_status = $4, last_error = NULL, claimed_until = NULL WHERE ${OWNED}`,
          [id, attempts, outcome.at, outcome.status],
        );
        return;
      case 'retry':
        await this.dataSource.query(
          `UPDATE webhook_deliveries SET next_attempt_at = $3, last_status = $4, last_error = $5, claimed_until = NULL WHERE ${OWNED}`,
          [id, attempts, outcome.nextAttemptAt, outcome.status, outcome.error],
        );
        return;
      case 'failed':
        await this.dataSource.query(
          `UPDATE webhook_deliveries SET status = 'failed', last_status = $3, last_error = $4, claimed_until = NULL WHERE ${OWNED}`,
          [id, attempts, outcome.status, outcome.error],
        );
        return;
    }
  }

  /**
   * Gives a claim back unattempted (a stopping worker aborted it): the lease is dropped and
   * the attempt not counted, so the row is due again at once, for any worker.
   */
  async release(delivery: Pick<ClaimedDelivery, 'id' | 'attempts'>): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET claimed_until = NULL, attempts = attempts - 1 WHERE ${OWNED}`,
      [delivery.id, delivery.attempts],
    );
  }

  /**
   * Deletes up to `batch` delivered or failed deliveries of events older than `cutoff`
   * (`events.webhooks.delivery_retention`); pending ones are never purged. How many went.
   */
  async purgeFinishedBefore(cutoff: Date, batch: number): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(
      "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 LIMIT $2)",
      [cutoff, batch],
    );
    return count;
  }
}
