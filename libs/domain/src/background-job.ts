/** What a run sees of its job: whether the job is stopping (a long run checks it between steps and ends early). */
export interface JobRun {
  readonly stopping: boolean;
}

/**
 * One background job: what it is called, when it runs and what a run does. Every job of the
 * broker is listed in one file (the end-user server's `background-jobs.ts`) and started,
 * logged and stopped by one runner (`JobRunner` of `@broker/bootstrap`).
 */
export interface JobDefinition<T> {
  /** The job's name: the `job` field of the runner's log lines. */
  readonly name: string;
  /** Whether the job runs on its timer in this process at all (a feature switched off in config: no). */
  readonly enabled?: boolean;
  /** From start to the first run (default `intervalMs`; 0: at once, and start waits for that run). */
  readonly firstRunAfterMs?: number;
  /** From the end of one run to the start of the next. */
  readonly intervalMs: number;
  /**
   * For a job whose next run depends on what the run found (the approval expiry sweep: the
   * next expiry): the delay after a run that succeeded, or `undefined` for no timer until woken.
   * Without it, `intervalMs`.
   */
  nextRunAfterMs?(result: T): number | undefined;
  /** The delay after a failed run (default `intervalMs`). */
  readonly retryAfterMs?: number;
  /** Called when the runner starts the job (a job that says in the log how it runs). */
  onStart?(): void;
  /** The message of the runner's log line when a run fails (the line carries `job` and `err`, never more). */
  readonly failure: string;
  /** One run. It may reject: the runner logs the failure and the next run retries. */
  run(job: JobRun): Promise<T>;
}

/** A provider that is a background job: the runner starts and stops its schedule. */
export interface HasBackgroundJob {
  readonly job: BackgroundJob<unknown>;
}

/** Upper bound of a Node.js timer's delay (a longer one fires at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * A job's schedule. Runs never overlap: `runNow` queues a run after the one in progress, and
 * the timer's runs take the same queue. After every run the timer is set again (the next run
 * `intervalMs` after this one ended, or what `nextRunAfterMs` says), but only between `start`
 * and `stop`; the timer is unref'd, so it never keeps a process alive. `stop` ends the
 * schedule and waits for the run in progress.
 */
export class BackgroundJob<T> implements JobRun {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private state: 'idle' | 'started' | 'stopped' = 'idle';
  private woken = false;
  private report: ((error: unknown) => void) | undefined;

  constructor(readonly definition: JobDefinition<T>) {}

  get name(): string {
    return this.definition.name;
  }

  /** Whether this process runs the job on its timer (config may switch it off). */
  get enabled(): boolean {
    return this.definition.enabled ?? true;
  }

  /** True once `stop` was called: a run in progress checks it to end early. */
  get stopping(): boolean {
    return this.state === 'stopped';
  }

  /** True between `start` and `stop`: the job runs on its timer. */
  get started(): boolean {
    return this.state === 'started';
  }

  /**
   * Sets the timer for the first run; `report` hears of every failed run from now on. With
   * `firstRunAfterMs` 0 the first run starts at once and the promise resolves when it ended.
   */
  start(report: (error: unknown) => void): Promise<void> {
    if (this.state !== 'idle') return Promise.resolve();
    this.state = 'started';
    this.report = report;
    this.definition.onStart?.();
    const first = this.definition.firstRunAfterMs ?? this.definition.intervalMs;
    if (first > 0) {
      this.arm(first);
      return Promise.resolve();
    }
    return this.runNow().then(
      () => undefined,
      () => undefined,
    );
  }

  /** Runs now, after the run in progress if any; rejects when the run fails. */
  runNow(): Promise<T> {
    const run = this.chain.then(() => {
      this.woken = false;
      return this.definition.run(this);
    });
    this.chain = run.then(
      (result) =>
        this.arm(this.definition.nextRunAfterMs ? this.definition.nextRunAfterMs(result) : this.definition.intervalMs),
      (error: unknown) => {
        this.report?.(error);
        this.arm(this.definition.retryAfterMs ?? this.definition.intervalMs);
      },
    );
    return run;
  }

  /** Asks for a run soon: at most one such run waits behind the one in progress (wake-ups coalesce). */
  wake(): void {
    if (this.woken || this.stopping) return;
    this.woken = true;
    this.runNow().catch(() => undefined);
  }

  /** No further runs on the timer; resolves once the run in progress has ended. */
  async stop(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
  }

  /** Sets the timer (replacing one set before); `undefined` leaves it unset; only while started. */
  private arm(delayMs: number | undefined): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.state !== 'started' || delayMs === undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.runNow().catch(() => undefined);
      },
      Math.min(MAX_DELAY_MS, Math.max(0, delayMs)),
    );
    this.timer.unref();
  }
}
