import { describe, expect, it } from 'vitest';
import { RestartBackoff } from './restart-backoff';

describe('RestartBackoff', () => {
  it('doubles the delay from 1 s on consecutive early deaths and caps it at 30 s', () => {
    const backoff = new RestartBackoff();
    expect([0, 0, 0, 0, 0, 0, 0, 0].map((uptime) => backoff.delayAfter(uptime))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('starts over at 1 s once a worker stayed up 60 s', () => {
    const backoff = new RestartBackoff();
    expect(backoff.delayAfter(5_000)).toBe(1_000);
    expect(backoff.delayAfter(59_999)).toBe(2_000);
    expect(backoff.delayAfter(60_000)).toBe(1_000);
    expect(backoff.delayAfter(10)).toBe(2_000);
  });
});
