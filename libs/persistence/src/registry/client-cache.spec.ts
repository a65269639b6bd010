import { randomUUID } from 'node:crypto';
import type { Agent } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { CLIENT_CACHE_TTL_MS, ClientCache, type ClientRecord } from './client-cache';

function record(secret: string): ClientRecord {
  return { agent: { id: randomUUID() } as Agent, secretSha256: Buffer.from(secret) };
}

describe('ClientCache', () => {
  it('serves a found client until the injected time passes the 5 s backstop, then reads it again', async () => {
    const cache = new ClientCache();
    let loads = 0;
    const load = (): Promise<ClientRecord> => {
      loads += 1;
      return Promise.resolve(record(`s${loads}`));
    };
    const t0 = Date.UTC(2026, 2, 1);
    const first = await cache.read('a', t0, load);
    expect(await cache.read('a', t0 + CLIENT_CACHE_TTL_MS - 1, load)).toBe(first);
    expect(loads).toBe(1);
    expect(await cache.read('a', t0 + CLIENT_CACHE_TTL_MS, load)).not.toBe(first);
    expect(loads).toBe(2);
  });

  it('never caches an unknown client', async () => {
    const cache = new ClientCache();
    let loads = 0;
    const load = (): Promise<undefined> => {
      loads += 1;
      return Promise.resolve(undefined);
    };
    await cache.read('nobody', 0, load);
    await cache.read('nobody', 0, load);
    expect(loads).toBe(2);
  });

  it('forgets every client on invalidate, and does not store a read that raced a write', async () => {
    const cache = new ClientCache();
    const before = await cache.read('a', 0, () => Promise.resolve(record('old')));
    cache.invalidate();
    const raced = await cache.read('a', 0, () => {
      cache.invalidate();
      return Promise.resolve(record('raced'));
    });
    expect(raced).not.toBe(before);
    const after = await cache.read('a', 0, () => Promise.resolve(record('new')));
    expect(after?.secretSha256?.toString()).toBe('new');
  });
});
