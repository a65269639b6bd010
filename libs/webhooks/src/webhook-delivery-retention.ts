import { BROKER_CONFIG, SERVER_KIND, type BrokerConfig, type ServerKind } from '@broker/config';
import { Clock } from '@broker/domain';
import { WebhookDeliveryRepository } from '@broker/persistence';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';

/** Rows per DELETE: short statements, so the outbox is never locked for long. */
export const DELIVERY_PURGE_BATCH = 1_000;
/** The pause between two batches of one purge (lets the outbox's inserts and claims through). */
const PAUSE_BETWEEN_BATCHES_MS = 50;
const FIRST_RUN_AFTER_MS = 60_000;
const EVERY_MS = 60 * 60_000;

/**
 * Deletes delivered and failed webhook deliveries of events older than
 * `events.webhooks.delivery_retention` (README "Webhooks"), a minute after start and then
 * every hour, in batches of `DELIVERY_PURGE_BATCH` with a short pause between them, as the
 * event ledger's retention does; pending deliveries are never purged. One per process: only
 * the end-user server's instance runs. Replicas purging at once only delete the same old
 * rows twice over (the second finds none). Stops at shutdown.
 */
@Injectable()
export class WebhookDeliveryRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WebhookDeliveryRetention.name);
  private readonly retentionMs: number;
  private readonly runs: boolean;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private closing = false;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(SERVER_KIND) server: ServerKind,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly clock: Clock,
  ) {
    this.retentionMs = config.events.webhooks.delivery_retention;
    this.runs = server === 'enduser';
  }

  onApplicationBootstrap(): void {
    if (this.runs) this.arm(FIRST_RUN_AFTER_MS);
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Purges now (after a purge in progress): every finished delivery of an event before now − retention. How many went. */
  async purgeNow(): Promise<number> {
    await this.running?.catch(() => undefined);
    const run = this.purge();
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = undefined;
    }
  }

  private arm(delayMs: number): void {
    if (this.closing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.purgeNow()
        .catch((error: unknown) => {
          // The message only: a query error object carries the statement's parameters.
          this.logger.warn({ error: (error as Error).message }, 'webhooks: purging old deliveries failed; the next run retries');
        })
        .finally(() => this.arm(EVERY_MS));
    }, delayMs);
    this.timer.unref();
  }

  private async purge(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - this.retentionMs);
    let deleted = 0;
    for (;;) {
      const count = await this.deliveries.purgeFinishedBefore(cutoff, DELIVERY_PURGE_BATCH);
      deleted += count;
      if (count < DELIVERY_PURGE_BATCH || this.closing) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_BATCHES_MS).unref());
    }
    if (deleted > 0) this.logger.log({ deleted, before: cutoff.toISOString() }, 'webhooks: purged old deliveries');
    return deleted;
  }
}
