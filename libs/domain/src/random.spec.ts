import { describe, expect, it } from 'vitest';
import { CryptoRandom } from './random';

describe('CryptoRandom', () => {
  it('never hands out the same pooled bytes twice and returns the lengths asked for', () => {
    const random = new CryptoRandom();
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i += 1) {
      const hex = random.hex(16);
      expect(hex).toMatch(/^[0-9a-f]{32}$/);
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
    expect(random.bytes(200)).toHaveLength(200);
    expect(random.token(32)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('returns copies that later draws from the pool do not change', () => {
    const random = new CryptoRandom();
    const first = random.bytes(8);
    const snapshot = Buffer.from(first);
    for (let i = 0; i < 1_000; i += 1) random.bytes(8);
    expect(first.equals(snapshot)).toBe(true);
  });
});
