/**
 * A FIFO lock with an acquisition timeout. PGlite is one Postgres backend: whoever
 * holds the lock owns the only connection, so a transaction never interleaves with
 * another caller's statements.
 */
export class ExclusiveLock {
  private held = false;
  private readonly waiters: Array<{ grant: () => void; timer: NodeJS.Timeout | undefined }> = [];

  acquire(timeoutMs: number): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => resolve(this.releaser()),
        timer: undefined as NodeJS.Timeout | undefined,
      };
      if (timeoutMs > 0) {
        waiter.timer = setTimeout(() => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for the embedded database connection ` +
                "(is a query running outside its transaction's EntityManager?)",
            ),
          );
        }, timeoutMs);
        waiter.timer.unref();
      }
      this.waiters.push(waiter);
    });
  }

  get isHeld(): boolean {
    return this.held;
  }

  /** Callers waiting for the lock now (`broker_db_pool_connections{state="waiting"}`). */
  get waiting(): number {
    return this.waiters.length;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next === undefined) {
        this.held = false;
        return;
      }
      if (next.timer) clearTimeout(next.timer);
      next.grant();
    };
  }
}
