import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { BackgroundJob, Clock, type HasBackgroundJob, type JobRun } from '@broker/domain';
import { AuthorizationCodeRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

/** When the purge runs: shortly after start, then every few minutes; how much one statement deletes. */
export const AUTHORIZATION_CODE_PURGE = {
  firstRunDelayMs: 10_000,
  intervalMs: 5 * 60_000,
  batchSize: 1_000,
} as const;

/**
 * Deletes authorization codes that expired unredeemed (a client that never came back to
 * the token endpoint leaves one behind; nothing else would ever remove it). Redeemed codes
 * need no purge and no tombstone: redemption deletes the row (`DELETE ... RETURNING`), and
 * a replay is refused because the row is absent, so keeping nothing is what replay
 * detection needs. A code whose expiry has passed can never be redeemed, so it goes too.
 *
 * A `BackgroundJob` run by the end-user server (its `background-jobs.ts`): runs never
 * overlap; batches of `batchSize` rows, yielding to the event loop between them so a large
 * backlog does not hold PGlite's single connection; every replica may purge (the statement
 * skips rows another one has locked). A failure is logged by the job runner (the error's
 * safe fields only, never query parameters) and the next run retries; it never escapes to
 * the process. At shutdown a run stops after its current batch (the database closes next).
 */
@Injectable()
export class AuthorizationCodePurge implements HasBackgroundJob {
  readonly job: BackgroundJob<number>;

  constructor(
    private readonly codes: AuthorizationCodeRepository,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('oauth2');
    this.job = new BackgroundJob({
      name: AuthorizationCodePurge.name,
      firstRunAfterMs: AUTHORIZATION_CODE_PURGE.firstRunDelayMs,
      intervalMs: AUTHORIZATION_CODE_PURGE.intervalMs,
      failure: 'purging expired authorization codes failed; the next run retries',
      run: (job) => this.purgeBatches(job),
    });
  }

  /** Purges now (after a run in progress). Resolves with the number of codes deleted. */
  purge(): Promise<number> {
    return this.job.runNow();
  }

  private async purgeBatches(job: JobRun): Promise<number> {
    // One cut-off for the whole run: batches never chase codes that expire meanwhile.
    const now = this.clock.now();
    let purged = 0;
    try {
      for (;;) {
        const deleted = await this.codes.purgeExpired(now, AUTHORIZATION_CODE_PURGE.batchSize);
        purged += deleted;
        if (deleted < AUTHORIZATION_CODE_PURGE.batchSize || job.stopping) break;
        await yieldToEventLoop();
      }
    } finally {
      // What went before a failure went for good: said either way.
      if (purged > 0) this.logger.info({ purged }, 'expired authorization codes purged');
    }
    return purged;
  }
}
