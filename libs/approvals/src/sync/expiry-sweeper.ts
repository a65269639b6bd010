import { BackgroundJob, Clock, type HasBackgroundJob } from '@broker/domain';
import { approvalExpired, EventLedger, recordChange } from '@broker/events';
import { ApprovalRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';

const RETRY_AFTER_FAILURE_MS = 5_000;

/**
 * Time-based exits from the sync state (a pending request past `approvals.pending_ttl`, a
 * one-time denial after its window) written as a change, so they bump the sync version and
 * wake the gateways like any decision: a gateway holding a long-poll learns that its request
 * expired. A `BackgroundJob` whose timer is set to the next exit: each run sweeps what is due
 * and reads the next exit; a change wakes it to read again (wake-ups coalesce: one read at a
 * time, one more after); a failed run is retried after 5 s. Run by the end-user server (its
 * `background-jobs.ts`); every replica may sweep, the conditional UPDATE changes each row
 * once. A sync request also sweeps first when an exit is due, so its answer never lists what
 * time has removed.
 */
@Injectable()
export class ExpirySweeper implements HasBackgroundJob {
  private nextAt: number | undefined;
  /** The run a sync request waits for while an exit is due (requests at once share it). */
  private dueRun: Promise<void> | undefined;
  readonly job: BackgroundJob<number | undefined>;

  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly clock: Clock,
    private readonly ledger: EventLedger,
  ) {
    this.job = new BackgroundJob({
      name: ExpirySweeper.name,
      firstRunAfterMs: 0,
      intervalMs: RETRY_AFTER_FAILURE_MS,
      nextRunAfterMs: (delay) => delay,
      retryAfterMs: RETRY_AFTER_FAILURE_MS,
      failure: 'approvals: expiring due records failed; retrying',
      run: () => this.sweepAndRead(),
    });
  }

  /** Something changed: the next exit may have moved. */
  changed(): void {
    this.job.wake();
  }

  /** Sweeps now when an exit is due by the clock (before a sync answer). Never rejects: a failure is the job's. */
  async sweepIfDue(): Promise<void> {
    if (!this.due()) return;
    this.dueRun ??= this.job
      .runNow()
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.dueRun = undefined;
      });
    await this.dueRun;
  }

  private due(): boolean {
    return this.nextAt !== undefined && this.nextAt <= this.clock.nowMs();
  }

  /** Expires what is due, then reads the next exit; the delay until it (undefined: none). */
  private async sweepAndRead(): Promise<number | undefined> {
    // Each expired pending request's `approval.expired` (the broker's), in the sweep's transaction.
    if (this.due()) await this.approvals.expireDue(this.clock.now(), recordChange(this.ledger, approvalExpired));
    this.nextAt = (await this.approvals.nextExpiry())?.getTime();
    return this.nextAt === undefined ? undefined : this.nextAt - this.clock.nowMs();
  }
}
