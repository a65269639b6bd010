import type { Clock } from '@broker/domain';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The process's phase (docs/operating.md). */
export type LifecyclePhase = 'starting' | 'running' | 'shutting_down';

/**
 * The process's phase and its in-flight requests, shared by both servers of a process.
 * `starting` until every server listens and the database answers; `shutting_down`
 * after SIGTERM/SIGINT, while in-flight requests drain and new ones get 503.
 */
export class Lifecycle {
  private phase: LifecyclePhase = 'starting';
  private inFlight = 0;
  /** Handlers still running whose client may already have gone (`completes`). */
  private running = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly shutdownListeners = new Set<() => void>();
  readonly startedAtMs: number;

  constructor(private readonly clock: Clock) {
    this.startedAtMs = clock.nowMs();
  }

  get current(): LifecyclePhase {
    return this.phase;
  }

  get inFlightRequests(): number {
    return this.inFlight;
  }

  uptimeSeconds(): number {
    return Math.max(0, Math.floor((this.clock.nowMs() - this.startedAtMs) / 1000));
  }

  markRunning(): void {
    if (this.phase === 'starting') this.phase = 'running';
  }

  beginShutdown(): void {
    if (this.phase === 'shutting_down') return;
    this.phase = 'shutting_down';
    for (const listener of [...this.shutdownListeners]) {
      try {
        listener();
      } catch {
        // A listener must never stop the shutdown itself.
      }
    }
  }

  /**
   * Calls `listener` when shutdown begins, so requests that would otherwise hold the drain
   * (held long-polls) can be answered at once. Returns the unsubscribe function.
   */
  onShutdown(listener: () => void): () => void {
    this.shutdownListeners.add(listener);
    return () => {
      this.shutdownListeners.delete(listener);
    };
  }

  /**
   * Counts a request as in flight until its response is finished or its connection
   * closes. Returns false when the request arrived during shutdown (it is not counted).
   */
  track(request: IncomingMessage, response: ServerResponse): boolean {
    if (this.phase === 'shutting_down') return false;
    this.inFlight += 1;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      this.inFlight -= 1;
      if (this.idle) this.notifyIdle();
    };
    response.once('finish', finish);
    response.once('close', finish);
    request.once('error', finish);
    return true;
  }

  /** Resolves true when no request is in flight, false when `timeoutMs` passes first. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.idle) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((waiter) => waiter !== onIdle);
        resolve(false);
      }, timeoutMs);
      const onIdle = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.idleWaiters.push(onIdle);
    });
  }

  /**
   * Runs `handler` counted as in flight until it settles, even when its client disconnects
   * first (the request's own count ends at the connection's close): the drain waits for it,
   * so the database is not closed under work that would still write, such as a provider
   * refresh whose rotated refresh token must be stored (the token endpoint's handler).
   */
  async completes<T>(handler: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await handler();
    } finally {
      this.running -= 1;
      if (this.idle) this.notifyIdle();
    }
  }

  private get idle(): boolean {
    return this.inFlight === 0 && this.running === 0;
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
