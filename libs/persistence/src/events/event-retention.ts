import { BROKER_CONFIG, SERVER_KIND, type BrokerConfig, type ServerKind } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { EventRepository } from './event.repository';

/** Rows per DELETE: short statements, so the table is never locked for long. */
export const PURGE_BATCH = 1_000;
/** The pause between two batches of one purge (lets the hot path's inserts through). */
const PAUSE_BETWEEN_BATCHES_MS = 50;
const FIRST_RUN_AFTER_MS = 60_000;
const EVERY_MS = 60 * 60_000;

/**
 * Issue 17 item 4: deletes events older than `events.retention`, a minute after start and
 * then every hour, in batches of `PURGE_BATCH` (`EventRepository.purgeBefore`) with a short
 * pause between them. One per process, as the proactive refresh sweeper: both servers build
 * the persistence module and only the end-user server's instance runs (a process running
 * only the admin server does not purge; the end-user servers do). Replicas purging at once
 * only delete the same old rows twice over (the second finds none). Stops at shutdown.
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EventRetention.name);
  private readonly retentionMs: number;
  private readonly runs: boolean;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private closing = false;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(SERVER_KIND) server: ServerKind,
    private readonly events: EventRepository,
    private readonly clock: Clock,
  ) {
    this.retentionMs = config.events.retention;
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

  /** Purges now (after a purge in progress): every event that happened before now − retention. Returns how many went. */
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
          this.logger.warn({ error: (error as Error).message }, 'event retention: purging old events failed; the next run retries');
        })
        .finally(() => this.arm(EVERY_MS));
    }, delayMs);
    this.timer.unref();
  }

  private async purge(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - this.retentionMs);
    let deleted = 0;
    for (;;) {
      const count = await this.events.purgeBefore(cutoff, PURGE_BATCH);
      deleted += count;
      if (count < PURGE_BATCH || this.closing) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_BATCHES_MS).unref());
    }
    if (deleted > 0) this.logger.log({ deleted, before: cutoff.toISOString() }, 'event retention: purged old events');
    return deleted;
  }
}
