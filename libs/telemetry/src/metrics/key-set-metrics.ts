import type { Counter } from 'prom-client';

/**
 * What a remote JWKS (`RemoteKeySet`) reports about its fetches: failures are counted,
 * and the time of the last success is kept for `broker_key_set_seconds_since_last_success`.
 */
export interface KeySetMetrics {
  fetchSucceeded(): void;
  fetchFailed(): void;
}

/** The key set metrics when metrics are disabled (and the default of code built without them). */
export const NO_KEY_SET_METRICS: KeySetMetrics = { fetchSucceeded: () => undefined, fetchFailed: () => undefined };

/** One key set instance's fetch history (several instances may share a name: both servers, several issuers). */
export class KeySetTracker implements KeySetMetrics {
  /** Monotonic ms of the first fetch attempt and of the last success; undefined until then. */
  firstAttemptMs: number | undefined;
  lastSuccessMs: number | undefined;

  constructor(
    readonly name: string,
    private readonly failures: Counter.Internal,
  ) {}

  fetchSucceeded(): void {
    const now = performance.now();
    this.firstAttemptMs ??= now;
    this.lastSuccessMs = now;
  }

  fetchFailed(): void {
    this.firstAttemptMs ??= performance.now();
    this.failures.inc();
  }
}

/**
 * Seconds since the last success per key set name: the freshest instance of the name wins
 * (one that fetched recently proves the issuer answers); an instance that never attempted a
 * fetch (an unused server's copy) is left out; while none succeeded, since the first attempt.
 */
export function keySetAges(trackers: readonly KeySetTracker[], set: (name: string, seconds: number) => void): void {
  const youngest = new Map<string, number>();
  const now = performance.now();
  for (const tracker of trackers) {
    const since = tracker.lastSuccessMs ?? tracker.firstAttemptMs;
    if (since === undefined) continue;
    const seconds = (now - since) / 1000;
    const known = youngest.get(tracker.name);
    if (known === undefined || seconds < known) youngest.set(tracker.name, seconds);
  }
  for (const [name, seconds] of youngest) set(name, seconds);
}
