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

/** What a claim takes: deliveries due by `now`, leased until `leaseUntil`, at most `limit`. */
export interface DeliveryClaim {
  readonly now: Date;
  readonly leaseUntil: Date;
  readonly limit: number;
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
 * Claims due deliveries of enabled webhooks. `FOR UPDATE SKIP LOCKED`: concurrent claims
 * (replicas, cluster workers) never take the same row; the lease is `next_attempt_at`
 * moved to `leaseUntil`, so a claimed row is not due again until the worker that holds it
 * has had its time (a worker that dies mid-attempt loses nothing: the row is due again when
 * the lease lapses, at-least-once). The attempt is counted at the claim.
 */
const CLAIM_SQL = `
UPDATE webhook_deliveries d SET next_attempt_at = $2, attempts = d.attempts + 1
  FROM (SELECT dd.id FROM webhook_deliveries dd JOIN webhooks ww ON ww.id = dd.webhook_id AND ww.enabled
         WHERE dd.status = 'pending' AND dd.next_attempt_at <= $1
         ORDER BY dd.next_attempt_at LIMIT $3
         FOR UPDATE OF dd SKIP LOCKED) due, webhooks w
 WHERE d.id = due.id AND w.id = d.webhook_id
RETURNING d.id, d.webhook_id, d.event_id, d.payload::text AS body, d.attempts, d.created_at, w.url, w.secret_envelope`;

/** Issue 17 item 5: the webhook outbox's worker side (claim, then record how the attempt ended). */
export class WebhookDeliveryRepository {
  constructor(private readonly dataSource: DataSource) {}

  async claimDue(claim: DeliveryClaim): Promise<ClaimedDelivery[]> {
    const [rows] = await this.dataSource.query<[ClaimRow[], number]>(CLAIM_SQL, [claim.now, claim.leaseUntil, claim.limit]);
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

  /** Records an attempt's end; a row already finished (by a worker whose lease had lapsed) is left as it is. */
  async record(id: string, outcome: AttemptOutcome): Promise<void> {
    switch (outcome.kind) {
      case 'delivered':
        await this.dataSource.query("UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $2, last_status = $3, last_error = NULL WHERE id = $1 AND status = 'pending'", [id, outcome.at, outcome.status]);
        return;
      case 'retry':
        await this.dataSource.query("UPDATE webhook_deliveries SET next_attempt_at = $2, last_status = $3, last_error = $4 WHERE id = $1 AND status = 'pending'", [id, outcome.nextAttemptAt, outcome.status, outcome.error]);
        return;
      case 'failed':
        await this.dataSource.query("UPDATE webhook_deliveries SET status = 'failed', last_status = $2, last_error = $3 WHERE id = $1 AND status = 'pending'", [id, outcome.status, outcome.error]);
        return;
    }
  }
}
