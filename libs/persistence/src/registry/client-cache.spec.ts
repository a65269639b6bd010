import { randomUUID } from 'node:crypto';
import type { Agent } from '@broker/domain';
import { FakeListenConnection } from '@broker/testing';
import { describe, expect, it } from 'vitest';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { CLIENT_CACHE_TTL_MS, ClientCache, type ClientRecord } from './client-cache';
import { REGISTRY_CHANNEL } from './registry-channel';

function record(secret: string): ClientRecord {
  return { agent: { id: randomUUID() } as Agent, secretSha256: Buffer.from(secret) };
}

describe('ClientCache', () => {
  it('serves a found client until the injected time passes the 5 s backstop, then reads it again', async () => {
    const cache = new ClientCache(undefined);
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
    const cache = new ClientCache(undefined);
    let loads = 0;
    const load = (): Promise<undefined> => {
      loads += 1;
      return Promise.resolve(undefined);
    };
    await cache.read('nobody', 0, load);
    await cache.read('nobody', 0, load);
    expect(loads).toBe(2);
  });

  it('forgets every client on invalidate (a write here) and on registry_changed, and keeps serving while the connection is down', async () => {
    const listen = new FakeListenConnection();
    const cache = new ClientCache(listen as unknown as PostgresListenConnection);
    let loads = 0;
    const load = (): Promise<ClientRecord> => {
      loads += 1;
      return Promise.resolve(record(`s${loads}`));
    };
    await cache.read('a', 0, load);
    await new Promise((resolve) => setImmediate(resolve));
    // The first lookup subscribed; once LISTEN ran, what was read before it is gone.
    expect([...listen.subscribers.keys()]).toEqual([REGISTRY_CHANNEL]);
    await cache.read('a', 0, load);
    await cache.read('a', 0, load);
    expect(loads).toBe(2);
    cache.invalidate();
    await cache.read('a', 0, load);
    expect(loads).toBe(3);
    listen.notify(REGISTRY_CHANNEL, 'agent');
    await cache.read('a', 0, load);
    expect(loads).toBe(4);
    // Down: the 5 s backstop bounds staleness, the reconnect empties it.
    listen.lose();
    await cache.read('a', 0, load);
    expect(loads).toBe(4);
    listen.resync();
    await cache.read('a', 0, load);
    expect(loads).toBe(5);
  });
});
