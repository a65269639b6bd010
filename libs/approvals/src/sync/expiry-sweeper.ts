import { Clock } from '@broker/domain';
import { approvalExpired, EventLedger, recordChange } from '@broker/events';
import { ApprovalRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

const RETRY_AFTER_FAILURE_MS = 5_000;
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Time-based exits from the sync state (a pending request past `approvals.pending_ttl`, a
 * one-time denial after its window) written as a change, so they bump the sync version and
 * wake the gateways like any decision: a gateway holding a long-poll learns that its request
 * expired. One timer per process, set to the next exit (re-read after every change); every
 * replica may sweep, the conditional UPDATE changes each row once. A sync request also
 * sweeps first when an exit is due, so its answer never lists what time has removed.
 */
@Injectable()
export class ExpirySweeper {
  private nextAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private sweeping: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
    private readonly ledger: EventLedger,
  ) {
    logger.setContext('approvals');
  }

  /** Learns the next exit and arms the timer. */
  start(): Promise<void> {
    this.stopped = false;
    return this.refresh();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Something changed: the next exit may have moved (coalesced: one read at a time, one more after). */
  changed(): void {
    void this.refresh();
  }

  /** Sweeps now when an exit is due by the clock (before a sync answer). */
  async sweepIfDue(): Promise<void> {
    if (this.nextAt !== undefined && this.nextAt <= this.clock.nowMs()) await this.sweep();
  }

  private sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        // Issue 17: each expired pending request's `approval.expired` (the broker's), in the sweep's transaction.
        await this.approvals.expireDue(this.clock.now(), recordChange(this.ledger, approvalExpired));
      } catch (error) {
        this.logger.warn({ err: error }, 'approvals: expiring due records failed; retrying');
      } finally {
        this.sweeping = undefined;
      }
      await this.refresh();
    })();
    return this.sweeping;
  }

  private refresh(): Promise<void> {
    if (this.refreshing !== undefined) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        try {
          this.nextAt = (await this.approvals.nextExpiry())?.getTime();
          this.arm(this.nextAt === undefined ? undefined : this.nextAt - this.clock.nowMs());
        } catch (error) {
          this.logger.warn({ err: error }, 'approvals: reading the next expiry failed; retrying');
          this.arm(RETRY_AFTER_FAILURE_MS);
        }
      } while (this.refreshAgain && !this.stopped);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private arm(delayMs: number | undefined): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (delayMs === undefined || this.stopped) return;
    this.timer = setTimeout(() => void this.sweep(), Math.min(MAX_DELAY_MS, Math.max(0, delayMs)));
    this.timer.unref();
  }
}
