/** The longest a sweep leaves a failing provider alone. */
export const MAX_BACKOFF_MS = 30 * 60_000;

/** A change of a service's back-off, for the one log line per change. */
export type BackoffChange =
  | { readonly kind: 'backing_off'; readonly serviceId: string; readonly delayMs: number; readonly failures: number }
  | { readonly kind: 'recovered'; readonly serviceId: string };

/**
 * Per-service back-off of the proactive sweep (a provider outage backs off
 * instead of hammering it). A failure while the service is not backed off starts (or
 * doubles) the back-off: `baseMs × 2^n` after the n-th consecutive one, at most
 * `MAX_BACKOFF_MS`; failures of refreshes already in flight when it started do not count
 * again. A success resets it. In-process state: each replica backs off on its own, and the
 * claim lease keeps replicas from retrying one session more than once per lease anyway.
 */
export class ServiceBackoff {
  private readonly state = new Map<string, { failures: number; until: number }>();

  constructor(private readonly baseMs: number) {}

  /** Services to skip at `nowMs`. */
  blocked(nowMs: number): string[] {
    return [...this.state].filter(([, s]) => s.until > nowMs).map(([serviceId]) => serviceId);
  }

  isBlocked(serviceId: string, nowMs: number): boolean {
    return (this.state.get(serviceId)?.until ?? 0) > nowMs;
  }

  /** A refresh of the service failed (provider outage); the change, when this starts or grows the back-off. */
  failed(serviceId: string, nowMs: number): BackoffChange | undefined {
    const current = this.state.get(serviceId);
    if (current !== undefined && current.until > nowMs) return undefined;
    const failures = (current?.failures ?? 0) + 1;
    const delayMs = Math.min(MAX_BACKOFF_MS, this.baseMs * 2 ** Math.min(failures, 30));
    this.state.set(serviceId, { failures, until: nowMs + delayMs });
    return { kind: 'backing_off', serviceId, delayMs, failures };
  }

  /** A refresh of the service succeeded; the change, when it was backed off. */
  succeeded(serviceId: string): BackoffChange | undefined {
    if (!this.state.delete(serviceId)) return undefined;
    return { kind: 'recovered', serviceId };
  }
}
