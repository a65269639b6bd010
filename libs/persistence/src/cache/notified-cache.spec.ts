import { randomUUID } from 'node:crypto';
import type { BrokerMetrics, CacheName } from '@broker/telemetry';
import { eventually, FakeListenConnection, postgresServerUrl, openPostgresReplicas } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../database';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { DROP_ALL, NotifiedCache, type Invalidation, type NotifiedCacheOptions } from './notified-cache';

const TTL_MS = 1_000;

interface Value {
  readonly principal: string;
  readonly family?: string;
  readonly version: number;
  /** The value's own expiry (epoch ms), earlier than the TTL or not. */
  readonly until?: number;
}

/** `changes`: the principal, `all` everything; `revoked`: `key:<k>` or `family:<f>`. */
function changes(payload: string | undefined): Invalidation {
  return payload === 'all' || payload === undefined ? DROP_ALL : { drop: 'index', index: 'principal', value: payload };
}
function revoked(payload: string | undefined): Invalidation {
  if (payload?.startsWith('key:') === true) return { drop: 'key', key: payload.slice(4) };
  if (payload?.startsWith('family:') === true) return { drop: 'index', index: 'family', value: payload.slice(7) };
  return DROP_ALL;
}

/** A cache over a fake connection (none: PGlite), every lookup counted, and a loader counting its loads. */
function setUp(options: Partial<NotifiedCacheOptions<Value, string | undefined>> = {}, connected = true) {
  const listen = connected ? new FakeListenConnection() : undefined;
  const counted: { cache: CacheName; hit: boolean }[] = [];
  const cache = new NotifiedCache<Value, string | undefined>({
    name: 'exchange_context',
    maxEntries: 3,
    ttlMs: TTL_MS,
    listen: listen as unknown as PostgresListenConnection | undefined,
    serve: 'while-listening',
    channels: [
      { channel: 'changes', invalidates: changes },
      { channel: 'revoked', invalidates: revoked },
    ],
    expiresAtMs: (value) => value.until,
    indexes: { principal: (_, value) => value.principal, family: (_, value) => value.family },
    ...options,
  });
  cache.metrics = {
    cacheLookup: (name: CacheName, hit: boolean) => counted.push({ cache: name, hit }),
  } as unknown as BrokerMetrics;
  let loads = 0;
  /** Reads `key`; a load answers `value` (version: the load's number). */
  const read = (key: string, nowMs = 0, value: Partial<Value> = {}, probe?: string) =>
    cache.read(key, nowMs, probe, () => {
      loads += 1;
      return Promise.resolve({ principal: 'alice', version: loads, ...value });
    });
  return { cache, listen, read, loads: () => loads, counted };
}

/** The first lookup subscribes; the subscriptions resolve on the next turn. */
async function listening(cache: NotifiedCache<Value, string | undefined>): Promise<void> {
  cache.lookup('warm-up', 0, undefined);
  await new Promise((resolve) => setImmediate(resolve));
}

describe('NotifiedCache', () => {
  it('subscribes on the first lookup, then serves from memory once every channel listens', async () => {
    const { cache, listen, read, loads } = setUp();
    expect(listen?.subscribers.size).toBe(0);
    expect(cache.active).toBe(false);
    await listening(cache);
    expect([...(listen?.subscribers.keys() ?? [])].sort()).toEqual(['changes', 'revoked']);
    expect(cache.active).toBe(true);
    await read('k');
    expect((await read('k'))?.version).toBe(1);
    expect(loads()).toBe(1);
  });

  it('loads every time and stores nothing while any channel is not listened on, or without a connection', async () => {
    const deaf = setUp();
    deaf.listen?.deaf.add('revoked');
    await listening(deaf.cache);
    expect(deaf.cache.active).toBe(false);
    await deaf.read('k');
    await deaf.read('k');
    expect(deaf.loads()).toBe(2);
    expect(deaf.cache.size).toBe(0);

    const pglite = setUp({}, false);
    await listening(pglite.cache);
    await pglite.read('k');
    await pglite.read('k');
    expect(pglite.loads()).toBe(2);
    expect(pglite.cache.active).toBe(false);
  });

  it('stops serving and empties when the connection is lost, and serves again from empty on resync', async () => {
    const { cache, listen, read, loads } = setUp();
    await listening(cache);
    await read('k');
    listen?.lose();
    expect(cache.active).toBe(false);
    expect(cache.size).toBe(0);
    await read('k');
    await read('k');
    expect(loads()).toBe(3);
    listen?.resync();
    expect(cache.active).toBe(true);
    await read('k');
    await read('k');
    expect(loads()).toBe(4);
  });

  it('serves without a connection and while it is down when told to serve always, and a resync empties it', async () => {
    const pglite = setUp({ serve: 'always' }, false);
    expect(pglite.cache.active).toBe(true);
    await pglite.read('k');
    await pglite.read('k');
    expect(pglite.loads()).toBe(1);

    const { cache, listen, read, loads } = setUp({ serve: 'always' });
    await listening(cache);
    await read('k');
    listen?.lose();
    expect(cache.active).toBe(true);
    await read('k');
    expect(loads()).toBe(1);
    listen?.resync();
    expect(cache.size).toBe(0);
    await read('k');
    expect(loads()).toBe(2);
  });

  it('drops what a notification names: one key, the entries of one index value, or everything', async () => {
    const { cache, listen, read, loads } = setUp({ maxEntries: 10 });
    await listening(cache);
    const fill = async (): Promise<void> => {
      await read('a1', 0, { principal: 'alice', family: 'f1' });
      await read('a2', 0, { principal: 'alice', family: 'f2' });
      await read('b1', 0, { principal: 'bob', family: 'f1' });
    };
    await fill();
    listen?.notify('revoked', 'key:a1');
    expect(cache.lookup('a1', 0, undefined)).toBeUndefined();
    expect(cache.size).toBe(2);
    listen?.notify('revoked', 'family:f1');
    expect(cache.lookup('b1', 0, undefined)).toBeUndefined();
    expect(cache.lookup('a2', 0, undefined)?.principal).toBe('alice');
    await fill();
    listen?.notify('changes', 'alice');
    expect(cache.size).toBe(1);
    expect(cache.lookup('b1', 0, undefined)?.principal).toBe('bob');
    listen?.notify('changes', 'all');
    expect(cache.size).toBe(0);
    // The second fill loaded only what the notifications had dropped.
    expect(loads()).toBe(3 + 2);
  });

  it('forgets at once what a write committed here changed (forgetKey, forgetIndexed, forgetAll)', async () => {
    const { cache, read } = setUp({ maxEntries: 10 });
    await listening(cache);
    await read('a1', 0, { principal: 'alice', family: 'f1' });
    await read('b1', 0, { principal: 'bob', family: 'f2' });
    await read('c1', 0, { principal: 'carol', family: 'f3' });
    cache.forgetKey('a1');
    expect(cache.lookup('a1', 0, undefined)).toBeUndefined();
    cache.forgetIndexed('family', 'f2');
    expect(cache.lookup('b1', 0, undefined)).toBeUndefined();
    expect(cache.size).toBe(1);
    cache.forgetAll();
    expect(cache.size).toBe(0);
    expect(() => cache.forgetIndexed('agent', 'x')).toThrow('no index agent');
  });

  it('returns a load that an invalidation overtook but does not store it', async () => {
    const { cache, read, loads } = setUp();
    await listening(cache);
    const raced = await cache.read('k', 0, undefined, () => {
      cache.forgetIndexed('principal', 'someone-else');
      return Promise.resolve({ principal: 'alice', version: 0 });
    });
    expect(raced?.version).toBe(0);
    expect(cache.size).toBe(0);
    await read('k');
    expect((await read('k'))?.version).toBe(1);
    expect(loads()).toBe(1);
  });

  it('loads again after the backstop TTL, or at the value’s own earlier expiry', async () => {
    const { cache, read, loads } = setUp();
    await listening(cache);
    await read('k', 0);
    await read('k', TTL_MS - 1);
    expect(loads()).toBe(1);
    await read('k', TTL_MS);
    expect(loads()).toBe(2);
    // Stored at TTL_MS, expiring on its own 100 ms later.
    await read('own', TTL_MS, { until: TTL_MS + 100 });
    await read('own', TTL_MS + 99);
    expect(loads()).toBe(3);
    await read('own', TTL_MS + 100);
    expect(loads()).toBe(4);
  });

  it('keeps only what `keep` accepts, and never undefined', async () => {
    const { cache, read, loads } = setUp({ keep: (value) => value.principal !== 'refused' });
    await listening(cache);
    await read('k', 0, { principal: 'refused' });
    await read('k', 0, { principal: 'refused' });
    expect(loads()).toBe(2);
    await cache.read('none', 0, undefined, () => Promise.resolve(undefined));
    expect(cache.size).toBe(0);
  });

  it('drops and loads again an entry that does not answer the probe', async () => {
    const { cache, read, loads } = setUp({ matches: (value, probe) => value.principal === probe });
    await listening(cache);
    await read('k', 0, { principal: 'alice' }, 'alice');
    await read('k', 0, { principal: 'alice' }, 'alice');
    expect(loads()).toBe(1);
    expect((await read('k', 0, { principal: 'mallory' }, 'mallory'))?.principal).toBe('mallory');
    expect(loads()).toBe(2);
    expect(cache.lookup('k', 0, 'alice')).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the oldest stored first, and unindexes what it drops', async () => {
    const { cache, read, loads } = setUp({ maxEntries: 3 });
    await listening(cache);
    await read('a', 0, { principal: 'alice' });
    await read('b', 0, { principal: 'bob' });
    await read('c', 0, { principal: 'carol' });
    // Stored again: `a` becomes the newest, `b` the oldest.
    cache.forgetKey('a');
    await read('a', 0, { principal: 'alice' });
    await read('d', 0, { principal: 'dave' });
    expect(cache.size).toBe(3);
    expect(cache.lookup('b', 0, undefined)).toBeUndefined();
    for (const key of ['a', 'c', 'd']) expect(cache.lookup(key, 0, undefined)).toBeDefined();
    // Bob's index entry went with his entry: a drop by principal finds nothing else.
    cache.forgetIndexed('principal', 'bob');
    expect(cache.size).toBe(3);
    expect(loads()).toBe(5);
  });

  it('counts a hit or a miss per lookup while serving, under its name, and nothing while not', async () => {
    const { cache, listen, read, counted } = setUp({ name: 'token_state' });
    // The first lookup, before the subscriptions resolved, is not served: not counted.
    await listening(cache);
    expect(counted).toEqual([]);
    await read('k');
    await read('k');
    expect(counted).toEqual([
      { cache: 'token_state', hit: false },
      { cache: 'token_state', hit: true },
    ]);
    listen?.lose();
    await read('k');
    expect(counted).toHaveLength(2);
  });

  it('shares one load among concurrent lookups when single-flight, and loads again after a failure or an invalidation', async () => {
    const { cache } = setUp({ serve: 'always', singleFlight: true }, false);
    let loads = 0;
    let release: () => void = () => undefined;
    const slow = (): Promise<Value> => {
      loads += 1;
      const version = loads;
      return new Promise((resolve) => (release = () => resolve({ principal: 'alice', version })));
    };
    const together = [cache.read('k', 0, undefined, slow), cache.read('k', 0, undefined, slow)];
    release();
    expect((await Promise.all(together)).map((value) => value?.version)).toEqual([1, 1]);
    expect(loads).toBe(1);

    cache.forgetAll();
    const before = cache.read('k', 0, undefined, slow);
    const releaseBefore = release;
    cache.forgetAll(); // a write commits while the load is in flight
    const after = cache.read('k', 0, undefined, slow);
    releaseBefore();
    release();
    expect([(await before)?.version, (await after)?.version]).toEqual([2, 3]);

    cache.forgetAll();
    await expect(cache.read('k', 0, undefined, () => Promise.reject(new Error('database down')))).rejects.toThrow(
      'database down',
    );
    const loaded = await cache.read('k', 0, undefined, () => Promise.resolve({ principal: 'alice', version: 9 }));
    expect(loaded?.version).toBe(9);
    expect(cache.size).toBe(1);
  });
});

/**
 * Two broker replicas on one PostgreSQL database, each with its own `Database` (its own LISTEN
 * connection) and its own cache: a write on A forgets A's entry at commit and notifies, and
 * B's entry goes when the notification arrives.
 */
describe.runIf(postgresServerUrl())('NotifiedCache across replicas on PostgreSQL', () => {
  let replicaA: Database;
  let replicaB: Database;
  let cacheA: NotifiedCache<Value>;
  let cacheB: NotifiedCache<Value>;

  const cacheOn = (database: Database): NotifiedCache<Value> =>
    new NotifiedCache<Value>({
      name: 'exchange_context',
      maxEntries: 100,
      // Never passes within the test: only a notification can drop an entry.
      ttlMs: 3_600_000,
      listen: database.notifications,
      serve: 'while-listening',
      channels: [
        { channel: 'notified_cache_changes', invalidates: changes },
        { channel: 'notified_cache_revoked', invalidates: revoked },
      ],
      indexes: { principal: (_, value) => value.principal },
    });
  const store = (cache: NotifiedCache<Value>, key: string, principal: string) =>
    cache.read(key, 0, undefined, () => Promise.resolve({ principal, version: 1 }));

  /** A's write: forgotten on A at commit, then notified (as the database triggers do). */
  const commitOnA = async (channel: string, payload: string, forget: () => void): Promise<void> => {
    await replicaA.dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]);
    forget();
  };

  /** Resolves once B heard every notification sent before: a marker sent after them arrives after them. */
  const settledOnB = async (): Promise<void> => {
    const marker = `marker-${randomUUID()}`;
    let heard: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const unsubscribe = await (replicaB.notifications as PostgresListenConnection).subscribe('notified_cache_changes', {
      notify: (payload) => payload === marker && heard(),
      resync: () => undefined,
      lost: () => undefined,
    });
    await replicaA.dataSource.query("SELECT pg_notify('notified_cache_changes', $1)", [marker]);
    await arrived;
    await unsubscribe();
  };

  beforeAll(async () => {
    [replicaA, replicaB] = await openPostgresReplicas();
    cacheA = cacheOn(replicaA);
    cacheB = cacheOn(replicaB);
    cacheA.lookup('warm-up', 0, undefined);
    cacheB.lookup('warm-up', 0, undefined);
    await eventually(() => cacheA.active && cacheB.active, Boolean, { waitingFor: 'both caches to serve' });
  });

  afterAll(async () => {
    await replicaA?.close();
    await replicaB?.close();
  });

  it("drops the other replica's entry for a key when its notification arrives", async () => {
    for (const cache of [cacheA, cacheB]) {
      await store(cache, 'token-1', 'alice');
      await store(cache, 'token-2', 'alice');
    }
    await commitOnA('notified_cache_revoked', 'key:token-1', () => cacheA.forgetKey('token-1'));
    expect(cacheA.lookup('token-1', 0, undefined)).toBeUndefined();
    await settledOnB();
    expect(cacheB.lookup('token-1', 0, undefined)).toBeUndefined();
    expect(cacheB.lookup('token-2', 0, undefined)?.principal).toBe('alice');
  });

  it("drops the other replica's entries of one person, and everything when told", async () => {
    for (const cache of [cacheA, cacheB]) {
      await store(cache, 'bob-1', 'bob');
      await store(cache, 'bob-2', 'bob');
      await store(cache, 'carol-1', 'carol');
    }
    await commitOnA('notified_cache_changes', 'bob', () => cacheA.forgetIndexed('principal', 'bob'));
    await settledOnB();
    for (const cache of [cacheA, cacheB]) {
      expect(cache.lookup('bob-1', 0, undefined)).toBeUndefined();
      expect(cache.lookup('bob-2', 0, undefined)).toBeUndefined();
      expect(cache.lookup('carol-1', 0, undefined)?.principal).toBe('carol');
    }
    await commitOnA('notified_cache_changes', 'all', () => cacheA.forgetAll());
    await settledOnB();
    expect([cacheA.size, cacheB.size]).toEqual([0, 0]);
  });
});
