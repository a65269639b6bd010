import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** How long to keep asking before giving up; 30 s unless said (the test's own timeout still bounds it). */
  timeoutMs?: number;
  /** The pause between two readings; 20 ms unless said. */
  intervalMs?: number;
  /** Said in the error when the condition never held: what the test was waiting for. */
  waitingFor?: string;
}

/**
 * Waits for a state of the system, never for a duration: reads `read` until `done` accepts
 * what it returned, and returns that value. When the wait ends without it, throws with what
 * the test waited for and the last value read, so a failure says more than "timed out".
 *
 * Without `done`, any truthy value ends the wait (`await eventually(() => received.length > 0)`).
 * Every test waits this one way; a test that must show that something does NOT happen waits
 * for a later event that proves the first one had its chance (see the approvals replicas test).
 */
export async function eventually<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 20, waitingFor = 'the condition' } = options;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (performance.now() >= deadline) {
      throw new Error(`eventually: ${waitingFor} did not hold within ${timeoutMs} ms (last read: ${describe(value)})`);
    }
    await sleep(intervalMs);
  }
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}
