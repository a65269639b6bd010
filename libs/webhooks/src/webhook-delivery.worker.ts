import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { BackgroundJob, Clock, type HasBackgroundJob, Random } from '@broker/domain';
import { networkList, OutboundHttp, OutboundHttpError } from '@broker/outbound';
import { WebhookDeliveryRepository, type AttemptOutcome, type ClaimedDelivery } from '@broker/persistence';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { nextAttemptAt } from './retry-schedule';
import { WebhookSecrets } from './webhook-secrets';
import { webhookHeaders } from './webhook-signature';

/** How often a worker looks for due deliveries (it also looks whenever one of its attempts ends). */
export const POLL_INTERVAL_MS = 1_000;
/**
 * A claim's lease beyond the request timeout: an attempt starts the moment its row is
 * claimed and ends by `events.webhooks.timeout`, so the lease outlives it by this much
 * (the recording round trip, a pause of the process, clocks of replicas apart).
 */
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

/** An attempt in flight: how to abort it, and its end (recorded or released, never rejects). */
interface InFlight {
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/**
 * Delivers the webhook outbox. Claims are per webhook
 * (`WebhookDeliveryRepository.claimDue`, README "Webhooks"): at most
 * `events.webhooks.concurrency` attempts in flight in this process, at most
 * `events.webhooks.per_webhook_concurrency` per webhook across every process, the webhooks
 * with the fewest attempts in flight first. A claimed row is attempted at once (never queued
 * behind other rows), so its lease (`events.webhooks.timeout` + 30 s, from the claim) outlives
 * the attempt and no other worker or replica claims it meanwhile. A slot is refilled as soon
 * as its attempt ends, and every second (a `BackgroundJob`: claims never overlap),
 * so one hung receiver holds its own slots only and every other delivery is claimed within a
 * poll interval.
 *
 * Each attempt POSTs the event's JSON through `OutboundHttp` under the webhook policy: the SSRF
 * address guard (special-use addresses refused unless in `events.webhooks.allowed_networks`,
 * judged at connect time on the resolved address), redirects never followed,
 * `events.webhooks.timeout`, the answer read up to 64 KiB and dropped. Standard Webhooks
 * headers (`webhook-id` = the event id, `webhook-timestamp`, `webhook-signature`). A 2xx
 * answer delivers; anything else is retried with exponential back-off and jitter
 * (`retry-schedule.ts`) until `events.webhooks.retry_for` has passed since the event, then
 * the delivery is `failed` (visible in the admin API). At-least-once: a process that dies
 * mid-attempt leaves a row that is due again when its lease lapses. Stopping aborts the
 * attempts in flight and releases their claims (due again at once, the attempt not counted),
 * so a stop never waits for a receiver.
 *
 * One worker per process: both servers build `WebhooksModule`, and only the end-user
 * server's job runner starts its instance (as the proactive refresh sweep). Time is the
 * injected `Clock`.
 */
@Injectable()
export class WebhookDeliveryWorker implements HasBackgroundJob, OnModuleDestroy {
  private readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly http: OutboundHttp;
  private readonly retryForMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly perWebhook: number;
  readonly job: BackgroundJob<number>;
  private readonly inFlight = new Map<string, InFlight>();
  /** Every attempt of this process added up. */
  readonly totals: DeliveryTotals = { attempts: 0, delivered: 0, retried: 0, failed: 0 };

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly secrets: WebhookSecrets,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    const { webhooks, enabled } = config.events;
    this.retryForMs = webhooks.retry_for;
    this.leaseMs = webhooks.timeout + LEASE_MARGIN_MS;
    this.concurrency = webhooks.concurrency;
    this.perWebhook = webhooks.per_webhook_concurrency;
    this.job = new BackgroundJob({
      name: WebhookDeliveryWorker.name,
      enabled,
      intervalMs: POLL_INTERVAL_MS,
      failure: 'webhooks: a delivery poll failed; the next poll retries',
      run: () => this.claimAndStart(),
    });
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

  /** True when this instance delivers on its timer (events enabled, started by the end-user server's job runner). */
  get delivering(): boolean {
    return this.job.started;
  }

  /** Attempts in flight in this process now. */
  get attemptsInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * No further claims (the job runner stops the job too); the attempts in flight are aborted
   * and their claims released (due again at once for any worker, the attempt not counted).
   * Resolves once all are released.
   */
  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
    const running = [...this.inFlight.values()];
    for (const attempt of running) attempt.abort.abort();
    await Promise.all(running.map((attempt) => attempt.done));
  }

  /**
   * Delivers what is due now: claims (after the claim in progress, if any) as slots free up
   * until nothing more can be claimed, and resolves once every attempt in flight has ended;
   * how many it claimed. Never rejects.
   */
  async deliverNow(): Promise<number> {
    let claimed = 0;
    for (;;) {
      claimed += await this.job.runNow();
      if (this.inFlight.size === 0) return claimed;
      await Promise.race([...this.inFlight.values()].map((attempt) => attempt.done));
    }
  }

  /** Claims as many due deliveries as there are free slots and starts each at once; how many. */
  private async claimAndStart(): Promise<number> {
    const free = this.concurrency - this.inFlight.size;
    if (this.job.stopping || free <= 0) return 0;
    const now = this.clock.now();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.deliveries.claimDue({
        now,
        leaseUntil: new Date(now.getTime() + this.leaseMs),
        limit: free,
        perWebhook: this.perWebhook,
      });
    } catch (error) {
      // The message only: a query error object carries the statement's parameters.
      this.logger.warn(
        { error: (error as Error).message },
        'webhooks: claiming due deliveries failed; the next poll retries',
      );
      return 0;
    }
    for (const delivery of claimed) this.start(delivery);
    return claimed.length;
  }

  private start(delivery: ClaimedDelivery): void {
    const abort = new AbortController();
    if (this.job.stopping) abort.abort();
    const done = this.deliverOne(delivery, abort.signal).finally(() => {
      this.inFlight.delete(delivery.id);
      this.refill();
    });
    this.inFlight.set(delivery.id, { abort, done });
  }

  /** A freed slot is offered at once to what is due (one claim queued at a time: wake-ups coalesce). */
  private refill(): void {
    this.job.wake();
  }

  private async deliverOne(delivery: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const result = signal.aborted ? 'aborted' : await this.attempt(delivery, signal);
    if (result === 'aborted') {
      try {
        await this.deliveries.release(delivery);
      } catch (failure) {
        this.logger.warn(
          { delivery_id: delivery.id, error: (failure as Error).message },
          'webhooks: releasing an aborted attempt failed; due again when its lease lapses',
        );
      }
      return;
    }
    this.totals.attempts += 1;
    const { status, error } = result;
    const now = this.clock.now();
    let outcome: AttemptOutcome;
    if (status !== null && status >= 200 && status < 300) {
      outcome = { kind: 'delivered', status, at: now };
      this.totals.delivered += 1;
    } else {
      const next = nextAttemptAt(delivery.createdAt, delivery.attempts, now, this.retryForMs, unitOf(this.random));
      const reason = (error ?? `answered ${status}`).slice(0, MAX_ERROR_LENGTH);
      outcome =
        next === null
          ? { kind: 'failed', status, error: reason }
          : { kind: 'retry', status, error: reason, nextAttemptAt: next };
      this.totals[next === null ? 'failed' : 'retried'] += 1;
      // Ids and the reason only: never the URL (it may carry a receiver's token) or the answer.
      this.logger.warn(
        {
          webhook_id: delivery.webhookId,
          delivery_id: delivery.id,
          attempts: delivery.attempts,
          status,
          error: reason,
          next_attempt_at: next?.toISOString() ?? null,
        },
        next === null ? 'webhooks: delivery failed for good' : 'webhooks: delivery attempt failed; retrying',
      );
    }
    try {
      await this.deliveries.record(delivery, outcome);
    } catch (failure) {
      this.logger.warn(
        { delivery_id: delivery.id, error: (failure as Error).message },
        'webhooks: recording a delivery attempt failed; retried when its lease lapses',
      );
    }
  }

  /** One signed POST; the answer's status, or why there is none, or `aborted` when the worker stopped it. */
  private async attempt(
    delivery: ClaimedDelivery,
    signal: AbortSignal,
  ): Promise<{ status: number | null; error: string | undefined } | 'aborted'> {
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
      const response = await this.http.post(
        delivery.url,
        delivery.body,
        { ...headers, 'content-type': 'application/json' },
        signal,
      );
      return { status: response.status, error: undefined };
    } catch (error) {
      if (signal.aborted) return 'aborted';
      if (error instanceof OutboundHttpError)
        return { status: error.status ?? null, error: `${error.reason}: ${error.message}` };
      return { status: null, error: `unexpected error (${(error as Error).name})` };
    }
  }
}
