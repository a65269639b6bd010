import { BackgroundJob, type HasBackgroundJob, type JobRun } from './background-job';
import type { Clock } from './clock';

/** Rows per DELETE: short statements, so a table is never locked for long. */
export const PURGE_BATCH = 1_000;
/** The pause between two batches of one purge (lets the table's inserts through). */
const PAUSE_BETWEEN_BATCHES_MS = 50;
const FIRST_RUN_AFTER_MS = 60_000;
const EVERY_MS = 60 * 60_000;

/** Where a retention job says what it purged: the job's own logger (a Nest `Logger` named after it). */
export interface RetentionLog {
  log(fields: object, message: string): void;
}

/** What a retention job purges, and how it speaks of it in the log. */
export interface RetentionTarget {
  /** How long rows are kept (milliseconds). */
  readonly retentionMs: number;
  /** Deletes up to `batch` rows older than `cutoff`; how many went. */
  purgeBatch(cutoff: Date, batch: number): Promise<number>;
  /** What the log calls the rows, e.g. `old events`. */
  readonly what: string;
  /** The log lines' prefix, e.g. `event retention`. */
  readonly topic: string;
  /** How often it runs, and the first time after start (default: hourly); for rows that pile up by the minute. */
  readonly everyMs?: number;
}

/**
 * A background purge of rows older than a retention: a minute after start and then every
 * hour (or every `everyMs`, from `everyMs` after start), in batches of `PURGE_BATCH` with a short pause between them (never a long lock).
 * The job runner starts it in the end-user server only (its `background-jobs.ts`), so one
 * instance per process purges; replicas purging at once only delete the same old rows twice
 * over (the second finds none). A failed run is logged by the runner and the next run
 * retries; at shutdown the purge stops after the batch in progress.
 */
export abstract class RetentionJob implements HasBackgroundJob {
  readonly job: BackgroundJob<number>;

  protected constructor(
    private readonly target: RetentionTarget,
    private readonly clock: Clock,
    name: string,
    private readonly logger: RetentionLog,
  ) {
    this.job = new BackgroundJob({
      name,
      firstRunAfterMs: target.everyMs ?? FIRST_RUN_AFTER_MS,
      intervalMs: target.everyMs ?? EVERY_MS,
      failure: `${target.topic}: purging ${target.what} failed; the next run retries`,
      run: (job) => this.purge(job),
    });
  }

  /** Purges now (after a purge in progress): every row older than now − retention. Returns how many went. */
  purgeNow(): Promise<number> {
    return this.job.runNow();
  }

  private async purge(job: JobRun): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - this.target.retentionMs);
    let deleted = 0;
    for (;;) {
      const count = await this.target.purgeBatch(cutoff, PURGE_BATCH);
      deleted += count;
      if (count < PURGE_BATCH || job.stopping) break;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_BATCHES_MS).unref());
    }
    if (deleted > 0)
      this.logger.log({ deleted, before: cutoff.toISOString() }, `${this.target.topic}: purged ${this.target.what}`);
    return deleted;
  }
}
