import { describe, expect, it } from 'vitest';
import { MAX_BACKOFF_MS, ServiceBackoff } from './service-backoff';

describe('ServiceBackoff', () => {
  it('doubles the back-off on each failure after the previous one ended, up to 30 minutes', () => {
    const backoff = new ServiceBackoff(1_000);
    let now = 0;
    const delays: number[] = [];
    for (let i = 0; i < 14; i += 1) {
      const change = backoff.failed('mail', now);
      if (change?.kind !== 'backing_off') throw new Error('expected a back-off');
      delays.push(change.delayMs);
      expect(backoff.isBlocked('mail', now + change.delayMs - 1)).toBe(true);
      now += change.delayMs;
      expect(backoff.isBlocked('mail', now)).toBe(false);
    }
    expect(delays.slice(0, 4)).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(delays.at(-1)).toBe(MAX_BACKOFF_MS);
  });

  it('does not count failures of refreshes in flight while backed off, and only names blocked services', () => {
    const backoff = new ServiceBackoff(1_000);
    expect(backoff.failed('mail', 0)).toMatchObject({ kind: 'backing_off', delayMs: 2_000, failures: 1 });
    expect(backoff.failed('mail', 10)).toBeUndefined();
    expect(backoff.blocked(10)).toEqual(['mail']);
    expect(backoff.blocked(2_000)).toEqual([]);
    expect(backoff.failed('mail', 2_000)).toMatchObject({ delayMs: 4_000, failures: 2 });
  });

  it('a success resets the back-off (one recovery change), and a success without a back-off changes nothing', () => {
    const backoff = new ServiceBackoff(1_000);
    backoff.failed('mail', 0);
    backoff.failed('mail', 2_000);
    expect(backoff.succeeded('mail')).toEqual({ kind: 'recovered', serviceId: 'mail' });
    expect(backoff.succeeded('mail')).toBeUndefined();
    expect(backoff.isBlocked('mail', 2_001)).toBe(false);
    expect(backoff.failed('mail', 2_001)).toMatchObject({ delayMs: 2_000, failures: 1 });
  });
});
