import { FakeListenConnection } from '@broker/testing';
import { describe, expect, it } from 'vitest';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { EXCHANGE_CHANNEL } from './exchange-context-cache';
import {
  TOKEN_REVOKED_CHANNEL,
  TOKEN_STATE_TTL_MS,
  TokenStateCache,
  type AccessTokenFacts,
  type AccessTokenKey,
} from './token-state-cache';

const FACTS: AccessTokenFacts = {
  revoked: false,
  familyRevoked: false,
  enterprise: false,
  grant: { validUntil: null, createdAt: new Date('2026-01-01T00:00:00Z') },
};
const key = (jti: string, extra: Partial<AccessTokenKey> = {}): AccessTokenKey => ({
  jti,
  familyId: undefined,
  principal: 'alice',
  agentId: 'agent-1',
  ...extra,
});

/** A cache over the fake connection (or none: PGlite), LISTEN done, and a counting loader. */
async function setUp({ listening = true } = {}) {
  const listen = listening ? new FakeListenConnection() : undefined;
  const cache = new TokenStateCache(listen as unknown as PostgresListenConnection | undefined);
  let loads = 0;
  const read = (k: AccessTokenKey, nowMs = 0, facts: AccessTokenFacts = FACTS) =>
    cache.read(k, nowMs, () => {
      loads += 1;
      return Promise.resolve(facts);
    });
  // The first read starts listening; once both LISTENs have run the cache serves from memory.
  await read(key('warm-up'));
  await new Promise((resolve) => setImmediate(resolve));
  return { cache, read, loads: () => loads, listen };
}

describe('TokenStateCache', () => {
  it('reads the database every time without a notification connection (PGlite)', async () => {
    const { cache, read, loads } = await setUp({ listening: false });
    await read(key('t1'));
    await read(key('t1'));
    expect(loads()).toBe(3);
    expect(cache.active).toBe(false);
  });

  it('serves a token read again from memory while LISTEN is up on both channels', async () => {
    const { cache, read, loads, listen } = await setUp();
    expect(cache.active).toBe(true);
    expect([...(listen?.subscribers.keys() ?? [])].sort()).toEqual([EXCHANGE_CHANNEL, TOKEN_REVOKED_CHANNEL].sort());
    await read(key('t1'));
    expect(await read(key('t1'))).toBe(FACTS);
    expect(loads()).toBe(2);
  });

  it('drops a token when its jti is revoked, and only that token', async () => {
    const { read, loads, listen } = await setUp();
    await read(key('t1'));
    await read(key('t2'));
    listen?.notify(TOKEN_REVOKED_CHANNEL, 'jti:t1');
    await read(key('t1'));
    await read(key('t2'));
    expect(loads()).toBe(4);
  });

  it('drops every token carrying a family when the family is revoked', async () => {
    const { read, loads, listen } = await setUp();
    await read(key('t1', { familyId: 'f1' }));
    await read(key('t2', { familyId: 'f1' }));
    await read(key('t3', { familyId: 'f2' }));
    listen?.notify(TOKEN_REVOKED_CHANNEL, 'family:f1');
    for (const k of [key('t1', { familyId: 'f1' }), key('t2', { familyId: 'f1' }), key('t3', { familyId: 'f2' })])
      await read(k);
    expect(loads()).toBe(1 + 3 + 2);
  });

  it("drops a person's tokens when their grants change, and everything on an empty payload", async () => {
    const { read, loads, listen } = await setUp();
    await read(key('t1', { principal: 'alice' }));
    await read(key('t2', { principal: 'bob' }));
    listen?.notify(EXCHANGE_CHANNEL, 'alice');
    await read(key('t1', { principal: 'alice' }));
    await read(key('t2', { principal: 'bob' }));
    expect(loads()).toBe(1 + 2 + 1);
    listen?.notify(EXCHANGE_CHANNEL, '');
    await read(key('t1', { principal: 'alice' }));
    await read(key('t2', { principal: 'bob' }));
    expect(loads()).toBe(1 + 2 + 1 + 2);
  });

  it('forgets at once what this process revoked or changed, before any notification', async () => {
    const { cache, read, loads } = await setUp();
    await read(key('t1', { familyId: 'f1', principal: 'alice' }));
    cache.forgetJti('t1');
    await read(key('t1', { familyId: 'f1', principal: 'alice' }));
    cache.forgetFamily('f1');
    await read(key('t1', { familyId: 'f1', principal: 'alice' }));
    cache.forgetPrincipal('alice');
    await read(key('t1', { familyId: 'f1', principal: 'alice' }));
    expect(loads()).toBe(1 + 4);
  });

  it('serves only while both channels are listened on', async () => {
    const listen = new FakeListenConnection();
    listen.deaf.add(EXCHANGE_CHANNEL);
    const cache = new TokenStateCache(listen as unknown as PostgresListenConnection);
    await cache.read(key('t1'), 0, () => Promise.resolve(FACTS));
    await new Promise((resolve) => setImmediate(resolve));
    expect(cache.active).toBe(false);
  });

  it('reads a token again after the backstop TTL, and when asked about another person or family', async () => {
    const { read, loads } = await setUp();
    await read(key('t1'), 0);
    await read(key('t1'), TOKEN_STATE_TTL_MS - 1);
    await read(key('t1'), TOKEN_STATE_TTL_MS);
    await read(key('t1', { principal: 'mallory' }), TOKEN_STATE_TTL_MS);
    expect(loads()).toBe(1 + 3);
  });
});
