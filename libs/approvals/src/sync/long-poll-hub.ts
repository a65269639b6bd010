import { BrokerMetrics } from '@broker/telemetry';
import { Injectable, Optional } from '@nestjs/common';
import { DeadlineHeap } from './deadline-heap';

/**
 * Why a wait ended. `changed`: the version moved past the waiter's (or notifications may
 * have been missed and it must re-read); `recheck`: the timeout passed while the change feed
 * was interrupted, so "nothing changed" is not certain; `timeout`, `aborted` (the client went
 * away), `shutdown` (the process is stopping).
 */
export type WaitOutcome = 'changed' | 'recheck' | 'timeout' | 'aborted' | 'shutdown';

interface Waiter {
  readonly version: number;
  readonly deadline: number;
  readonly feedEpoch: number;
  heapIndex: number;
  settle(outcome: WaitOutcome): void;
}

/** Monotonic milliseconds: a long-poll timeout is a transport timeout, not domain time. */
const monotonicNow = (): number => performance.now();

/** Largest delay `setTimeout` accepts. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * The process's held long-polls. Memory per waiter is one small record in a deadline heap
 * (plus the closure of its promise); one timer, set to the earliest deadline, serves all of
 * them; nothing touches the database while they wait. A change notification wakes the
 * waiters behind it in one coalesced pass; an aborted request leaves the heap at once; on
 * shutdown every waiter is answered immediately.
 */
@Injectable()
export class LongPollHub {
  private readonly heap = new DeadlineHeap<Waiter>();
  private latest = 0;
  private feedEpoch = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private wakeScheduled = false;
  private resyncPending = false;
  private closed = false;

  /** `broker_approval_waiters` reads `held` at scrape time; wake-ups are counted. */
  constructor(@Optional() private readonly metrics?: BrokerMetrics) {
    metrics?.watchApprovalWaiters(() => this.heap.size);
  }

  /** Waiters currently held. */
  get held(): number {
    return this.heap.size;
  }

  /** The highest version a notification has announced. */
  get latestVersion(): number {
    return this.latest;
  }

  /**
   * Waits until a version after `version` is announced, `timeoutMs` passes, `signal` aborts
   * or the process shuts down. A version announced before the call counts: a change that
   * committed between the caller's read and this call is never missed.
   */
  wait(version: number, timeoutMs: number, signal: AbortSignal): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve('shutdown');
    if (signal.aborted) return Promise.resolve('aborted');
    if (this.latest > version) return Promise.resolve('changed');
    return new Promise<WaitOutcome>((resolve) => {
      const onAbort = (): void => this.release(waiter, 'aborted');
      const waiter: Waiter = {
        version,
        deadline: monotonicNow() + Math.max(0, timeoutMs),
        feedEpoch: this.feedEpoch,
        heapIndex: -1,
        settle: (outcome) => {
          signal.removeEventListener('abort', onAbort);
          resolve(outcome);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.heap.push(waiter);
      this.arm();
    });
  }

  /** A committed change made the version `version`: wakes the waiters behind it (coalesced). */
  changed(version: number): void {
    if (version <= this.latest) return;
    this.latest = version;
    this.scheduleWake();
  }

  /** Notifications may have been missed: every waiter re-reads. */
  resync(): void {
    this.resyncPending = true;
    this.scheduleWake();
  }

  /** The change feed was interrupted: a waiter timing out meanwhile must re-check before answering 304. */
  feedLost(): void {
    this.feedEpoch += 1;
  }

  /**
   * A read that started when `announced` was the latest announcement saw `version`. Below it
   * (and nothing announced since) means the counter went back (a restored database): the
   * database wins, so waiters are not woken over and over by a version that will not come.
   */
  observed(version: number, announced: number): void {
    if (this.latest === announced && version < announced) this.latest = version;
  }

  /** Answers every waiter now and refuses new ones (process shutdown). */
  shutdown(): void {
    this.closed = true;
    this.disarm();
    for (const waiter of this.heap.removeWhere(() => true)) waiter.settle('shutdown');
  }

  private release(waiter: Waiter, outcome: WaitOutcome): void {
    if (!this.heap.remove(waiter)) return;
    waiter.settle(outcome);
    if (this.heap.size === 0) this.disarm();
  }

  private scheduleWake(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    // One pass for a burst of notifications.
    setImmediate(() => {
      this.wakeScheduled = false;
      const everyone = this.resyncPending;
      this.resyncPending = false;
      const latest = this.latest;
      const woken = this.heap.removeWhere((w) => everyone || w.version < latest);
      for (const waiter of woken) waiter.settle('changed');
      if (woken.length > 0) this.metrics?.approvalWakeups(woken.length);
      this.arm();
    });
  }

  /** Sets the one timer to the earliest deadline (only moved earlier, or cleared when idle). */
  private arm(): void {
    const top = this.heap.peek();
    if (top === undefined) {
      this.disarm();
      return;
    }
    if (this.timer !== undefined && this.timerAt <= top.deadline) return;
    this.disarm();
    this.timerAt = top.deadline;
    this.timer = setTimeout(
      () => this.expire(),
      Math.min(MAX_DELAY_MS, Math.max(0, Math.ceil(top.deadline - monotonicNow()))),
    );
    this.timer.unref();
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private expire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    // setTimeout may fire a fraction of a millisecond early.
    for (const waiter of this.heap.popUntil(monotonicNow() + 1))
      waiter.settle(waiter.feedEpoch === this.feedEpoch ? 'timeout' : 'recheck');
    this.arm();
  }
}
