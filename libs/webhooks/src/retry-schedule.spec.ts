import { describe, expect, it } from 'vitest';
import { MAX_RETRY_MS, nextAttemptAt, retryDelayMs } from './retry-schedule';

describe('retryDelayMs', () => {
  it('doubles from 5 s with jitter in the upper half, capped at 1 h', () => {
    expect(retryDelayMs(1, 0)).toBe(2_500);
    expect(retryDelayMs(1, 0.999_999)).toBe(5_000);
    expect(retryDelayMs(2, 0)).toBe(5_000);
    expect(retryDelayMs(4, 0.5)).toBe(30_000);
    expect(retryDelayMs(30, 0.999_999)).toBeCloseTo(MAX_RETRY_MS, -1);
    expect(retryDelayMs(30, 0)).toBe(MAX_RETRY_MS / 2);
  });

  it('never waits less after a later failure, whatever the draws, up to the cap', () => {
    // 5 s × 2^9 = 42.7 min is the last uncapped base (the 10th failure).
    for (let attempts = 1; attempts < 10; attempts += 1)
      expect(retryDelayMs(attempts + 1, 0)).toBeGreaterThanOrEqual(retryDelayMs(attempts, 0.999_999));
  });
});

describe('nextAttemptAt', () => {
  const created = new Date('2026-01-01T00:00:00Z');
  const day = 86_400_000;

  it('retries after the delay while the retry period lasts', () => {
    expect(nextAttemptAt(created, 1, created, day, 0)).toEqual(new Date(created.getTime() + 2_500));
  });

  it('makes the last attempt at the deadline, then gives up', () => {
    const late = new Date(created.getTime() + day - 1_000);
    expect(nextAttemptAt(created, 12, late, day, 0.5)).toEqual(new Date(created.getTime() + day));
    expect(nextAttemptAt(created, 13, new Date(created.getTime() + day), day, 0.5)).toBeNull();
  });
});
