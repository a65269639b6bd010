import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Clock } from '@broker/domain';
import { AuthorizationCodeRepository } from '@broker/persistence';
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
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
 * One timer per process (end-user server), unref'd, re-armed after each run so runs never
 * overlap; batches of `batchSize` rows, yielding to the event loop between them so a large
 * backlog does not hold PGlite's single connection; every replica may purge (the statement
 * skips rows another one has locked). A failure is logged (the error's message only, never
 * query parameters) and the next run retries; it never escapes to the process.
 */
@Injectable()
export class AuthorizationCodePurge implements OnModuleInit, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private closing = false;

  constructor(
    private readonly codes: AuthorizationCodeRepository,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('oauth2');
  }

  onModuleInit(): void {
    this.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  /** Arms the first run. */
  start(): void {
    this.closing = false;
    this.arm(AUTHORIZATION_CODE_PURGE.firstRunDelayMs);
  }

  /** No further runs; waits for a run in progress to finish its current batch (the database closes next). */
  async stop(): Promise<void> {
    this.closing = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Purges now (joining a run in progress). Resolves with the number of codes deleted; never rejects. */
  purge(): Promise<number> {
    this.running ??= this.purgeBatches().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async purgeBatches(): Promise<number> {
    // One cut-off for the whole run: batches never chase codes that expire meanwhile.
    const now = this.clock.now();
    let purged = 0;
    try {
      for (;;) {
        const deleted = await this.codes.purgeExpired(now, AUTHORIZATION_CODE_PURGE.batchSize);
        purged += deleted;
        if (deleted < AUTHORIZATION_CODE_PURGE.batchSize || this.closing) break;
        await yieldToEventLoop();
      }
    } catch (error) {
      this.logger.warn({ err: error, purged }, 'purging expired authorization codes failed; the next run retries');
    }
    if (purged > 0) this.logger.info({ purged }, 'expired authorization codes purged');
    return purged;
  }

  private arm(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.closing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.purge().then(() => this.arm(AUTHORIZATION_CODE_PURGE.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
