import { BROKER_CONFIG, SERVER_KIND, type BrokerConfig, type ServerKind } from '@broker/config';
import { Clock, PeriodicTask, Random } from '@broker/domain';
import { networkList, OutboundHttp, OutboundHttpError } from '@broker/outbound';
import { WebhookDeliveryRepository, type AttemptOutcome, type ClaimedDelivery } from '@broker/persistence';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { nextAttemptAt } from './retry-schedule';
import { WebhookSecrets } from './webhook-secrets';
import { webhookHeaders } from './webhook-signature';

/** How often a worker looks for due deliveries. */
export const POLL_INTERVAL_MS = 1_000;
/** Deliveries claimed per poll. */
const BATCH_SIZE = 50;
/** Deliveries in flight at once per process. */
const CONCURRENCY = 4;
/** A claim's lease beyond the request timeout: the time a worker holds a claimed row. */
const LEASE_MARGIN_MS = 30_000;
/** A receiver's answer is read up to this (and dropped): only its status matters. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** `last_error` is short and never carries the answer. */
const MAX_ERROR_LENGTH = 200;

/** What this process's attempts did since start (tests and diagnostics read it). */
export interface DeliveryTotals {
  attempts: number;
  delivered: number;
  retried: number;
  failed: number;
}

/** A uniform draw in [0, 1) from the injected randomness. */
function unitOf(random: Random): number {
  return random.bytes(4).readUInt32BE() / 2 ** 32;
}

/**
 * Issue 17 item 5: delivers the webhook outbox. Every second (a setTimeout chain, unref'd;
 * polls never overlap) it claims up to 50 due deliveries (`WebhookDeliveryRepository
 * .claimDue`: `FOR UPDATE SKIP LOCKED`, the lease is `next_attempt_at`, so replicas and
 * cluster workers share the outbox without delivering a row twice in the normal case) and
 * POSTs each event's JSON, four at a time, through `OutboundHttp` under the webhook policy:
 * the SSRF address guard (special-use addresses refused unless in
 * `events.webhooks.allowed_networks`, judged at connect time on the resolved address),
 * redirects never followed, `events.webhooks.timeout`, the answer read up to 64 KiB and
 * dropped. Standard Webhooks headers (`webhook-id` = the event id, `webhook-timestamp`,
 * `webhook-signature`). A 2xx answer delivers; anything else is retried with exponential
 * back-off and jitter (`retry-schedule.ts`) until `events.webhooks.retry_for` has passed
 * since the event, then the delivery is `failed` (visible in the admin API). At-least-once:
 * a process that dies mid-attempt leaves a row that is due again when its lease lapses.
 *
 * One worker per process: both servers build `WebhooksModule`, and only the end-user
 * server's instance runs (as the proactive refresh sweep). Time is the injected `Clock`.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly http: OutboundHttp;
  private readonly retryForMs: number;
  private readonly leaseMs: number;
  private readonly runs: boolean;
  private readonly task = new PeriodicTask(() => this.poll(), POLL_INTERVAL_MS);
  private started = false;
  /** Every attempt of this process added up. */
  readonly totals: DeliveryTotals = { attempts: 0, delivered: 0, retried: 0, failed: 0 };

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(SERVER_KIND) server: ServerKind,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly secrets: WebhookSecrets,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    const { webhooks, enabled } = config.events;
    this.retryForMs = webhooks.retry_for;
    this.leaseMs = webhooks.timeout + LEASE_MARGIN_MS;
    this.runs = enabled && server === 'enduser';
    this.http = new OutboundHttp({
      connectTimeoutMs: webhooks.timeout,
      totalTimeoutMs: webhooks.timeout,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      // A 3xx is an answer like any other non-2xx: recorded and retried, never followed.
      redirects: 'return',
      // An admin chose the URL: the SSRF address rules apply.
      addressGuard: { allowed: networkList(webhooks.allowed_networks) },
    });
  }

  onApplicationBootstrap(): void {
    if (!this.runs) return;
    this.started = true;
    this.task.start();
  }

  /** True when this instance delivers on its timer (events enabled, the end-user server's). */
  get delivering(): boolean {
    return this.started && !this.task.stopping;
  }

  onModuleDestroy(): Promise<void> {
    return this.task.stop();
  }

  /** Delivers what is due now, after the poll in progress if any (polls never overlap); how many were claimed. Never rejects. */
  deliverNow(): Promise<number> {
    return this.task.runNow();
  }

  private async poll(): Promise<number> {
    if (this.task.stopping) return 0;
    const now = this.clock.now();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.deliveries.claimDue({ now, leaseUntil: new Date(now.getTime() + this.leaseMs), limit: BATCH_SIZE });
    } catch (error) {
      // The message only: a query error object carries the statement's parameters.
      this.logger.warn({ error: (error as Error).message }, 'webhooks: claiming due deliveries failed; the next poll retries');
      return 0;
    }
    const queue = [...claimed];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await this.deliverOne(next);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    return claimed.length;
  }

  private async deliverOne(delivery: ClaimedDelivery): Promise<void> {
    this.totals.attempts += 1;
    const { status, error } = await this.attempt(delivery);
    const now = this.clock.now();
    let outcome: AttemptOutcome;
    if (status !== null && status >= 200 && status < 300) {
      outcome = { kind: 'delivered', status, at: now };
      this.totals.delivered += 1;
    } else {
      const next = nextAttemptAt(delivery.createdAt, delivery.attempts, now, this.retryForMs, unitOf(this.random));
      const reason = (error ?? `answered ${status}`).slice(0, MAX_ERROR_LENGTH);
      outcome = next === null ? { kind: 'failed', status, error: reason } : { kind: 'retry', status, error: reason, nextAttemptAt: next };
      this.totals[next === null ? 'failed' : 'retried'] += 1;
      // Ids and the reason only: never the URL (it may carry a receiver's token) or the answer.
      this.logger.warn({ webhook_id: delivery.webhookId, delivery_id: delivery.id, attempts: delivery.attempts, status, error: reason, next_attempt_at: next?.toISOString() ?? null }, next === null ? 'webhooks: delivery failed for good' : 'webhooks: delivery attempt failed; retrying');
    }
    try {
      await this.deliveries.record(delivery.id, outcome);
    } catch (failure) {
      this.logger.warn({ delivery_id: delivery.id, error: (failure as Error).message }, 'webhooks: recording a delivery attempt failed; retried when its lease lapses');
    }
  }

  /** One signed POST; the answer's status, or why there is none. */
  private async attempt(delivery: ClaimedDelivery): Promise<{ status: number | null; error: string | undefined }> {
    let key: Buffer;
    try {
      key = this.secrets.open(delivery.webhookId, delivery.secretEnvelope);
    } catch {
      return { status: null, error: 'the webhook secret could not be opened' };
    }
    let headers: Record<string, string>;
    try {
      headers = webhookHeaders(key, delivery.eventId, Math.floor(this.clock.nowMs() / 1000), delivery.body);
    } finally {
      key.fill(0);
    }
    try {
      const response = await this.http.post(delivery.url, delivery.body, { ...headers, 'content-type': 'application/json' });
      return { status: response.status, error: undefined };
    } catch (error) {
      if (error instanceof OutboundHttpError) return { status: error.status ?? null, error: `${error.reason}: ${error.message}` };
      return { status: null, error: `unexpected error (${(error as Error).name})` };
    }
  }
}
