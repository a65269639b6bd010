/**
 * A background job's schedule: `work` runs `intervalMs` after the previous run ended (runs
 * never overlap; the timer is unref'd, so it never keeps a process alive), `runNow` queues
 * a run after the one in progress, and `stop` ends the schedule and waits for the run in
 * progress. The proactive refresh sweep and the webhook delivery worker share it.
 */
export class PeriodicTask<T> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly intervalMs: number,
  ) {}

  /** True once `stop` was called: a run in progress checks it to end early. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Schedules the first run one interval from now. */
  start(): void {
    this.arm();
  }

  /** Runs now, after the run in progress if any. */
  runNow(): Promise<T> {
    const run = this.chain.then(() => this.work());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** No further runs; resolves once the run in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runNow()
        .catch(() => undefined)
        .finally(() => this.arm());
    }, this.intervalMs);
    this.timer.unref();
  }
}
