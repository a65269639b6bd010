import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Clock } from '@broker/domain';

/** Rows per DELETE: short statements, so a table is never locked for long. */
export const PURGE_BATCH = 1_000;
/** The pause between two batches of one purge (lets the table's inserts through). */
const PAUSE_BETWEEN_BATCHES_MS = 50;
const FIRST_RUN_AFTER_MS = 60_000;
const EVERY_MS = 60 * 60_000;

/** What a retention job purges, and how it speaks of it in the log. */
export interface RetentionTarget {
  /** How long rows are kept (milliseconds). */
  readonly retentionMs: number;
  /** Whether this instance runs the job (one per process: the end-user server's). */
  readonly runs: boolean;
  /** Deletes up to `batch` rows older than `cutoff`; how many went. */
  purgeBatch(cutoff: Date, batch: number): Promise<number>;
  /** What the log calls the rows, e.g. `old events`. */
  readonly what: string;
  /** The log lines' prefix, e.g. `event retention`. */
  readonly topic: string;
}

/**
 * A background purge of rows older than a retention: a minute after start and then every
 * hour, in batches of `PURGE_BATCH` with a short pause between them (never a long lock).
 * One per process: both servers build the modules and only the end-user server's instance
 * runs (a process running only the admin server does not purge; the end-user servers do).
 * Replicas purging at once only delete the same old rows twice over (the second finds none).
 * Stops at shutdown, after the batch in progress.
 */
export abstract class RetentionJob implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private closing = false;

  protected constructor(
    private readonly target: RetentionTarget,
    private readonly clock: Clock,
    name: string,
  ) {
    this.logger = new Logger(name);
  }

  onApplicationBootstrap(): void {
    if (this.target.runs) this.arm(FIRST_RUN_AFTER_MS);
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Purges now (after a purge in progress): every row older than now − retention. Returns how many went. */
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
          this.logger.warn(
            { error: (error as Error).message },
            `${this.target.topic}: purging ${this.target.what} failed; the next run retries`,
          );
        })
        .finally(() => this.arm(EVERY_MS));
    }, delayMs);
    this.timer.unref();
  }

  private async purge(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - this.target.retentionMs);
    let deleted = 0;
    for (;;) {
      const count = await this.target.purgeBatch(cutoff, PURGE_BATCH);
      deleted += count;
      if (count < PURGE_BATCH || this.closing) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_BATCHES_MS).unref());
    }
    if (deleted > 0)
      this.logger.log({ deleted, before: cutoff.toISOString() }, `${this.target.topic}: purged ${this.target.what}`);
    return deleted;
  }
}
