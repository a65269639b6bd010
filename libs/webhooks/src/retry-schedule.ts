/** The first retry waits about this long. */
export const FIRST_RETRY_MS = 5_000;
/** No wait between attempts is longer than this. */
export const MAX_RETRY_MS = 3_600_000;

/**
 * The wait after the `attempts`-th failed attempt: exponential back-off (5 s × 2^(n-1),
 * capped at 1 h) with jitter over its upper half ("equal jitter": a uniform draw in
 * [base/2, base]). Jitter spreads receivers' retries after an outage; keeping the lower
 * half fixed keeps the waits growing from one attempt to the next, which full jitter
 * ([0, base]) does not. `unit` is a uniform draw in [0, 1).
 */
export function retryDelayMs(attempts: number, unit: number): number {
  const base = Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);
  return Math.round(base / 2 + (unit * base) / 2);
}

/**
 * When a failed delivery is tried next, or null when it has failed for good: retries go
 * on until `retryForMs` has passed since the delivery was created, the last one at that
 * deadline (`events.webhooks.retry_for`, 24 h by default).
 */
export function nextAttemptAt(
  createdAt: Date,
  attempts: number,
  now: Date,
  retryForMs: number,
  unit: number,
): Date | null {
  const deadline = createdAt.getTime() + retryForMs;
  if (now.getTime() >= deadline) return null;
  return new Date(Math.min(now.getTime() + retryDelayMs(attempts, unit), deadline));
}
