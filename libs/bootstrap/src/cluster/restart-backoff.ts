/**
 * How long the primary waits before replacing a worker that died. A
 * worker that keeps crashing at start-up must not be restarted in a tight loop (each
 * attempt opens database connections and logs), while a worker that ran for a long time
 * and then died is replaced quickly. The delay doubles from `initialMs` up to `maxMs` on
 * each consecutive death, and starts over once a worker has stayed up `resetAfterMs`.
 */
export class RestartBackoff {
  private next: number;

  constructor(
    private readonly initialMs = 1_000,
    private readonly maxMs = 30_000,
    private readonly resetAfterMs = 60_000,
  ) {
    this.next = initialMs;
  }

  /** The delay before restarting a worker that died after running `uptimeMs` (0 when it never finished starting). */
  delayAfter(uptimeMs: number): number {
    if (uptimeMs >= this.resetAfterMs) this.next = this.initialMs;
    const delay = this.next;
    this.next = Math.min(this.next * 2, this.maxMs);
    return delay;
  }
}
