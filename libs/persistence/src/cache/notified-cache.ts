import type { BrokerMetrics, CacheName } from '@broker/telemetry';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';

/** What one notification (or one local commit) makes the cache forget. */
export type Invalidation =
  | { readonly drop: 'all' }
  | { readonly drop: 'key'; readonly key: string }
  | { readonly drop: 'index'; readonly index: string; readonly value: string };

/** Forget everything: a payload saying "anything may have changed". */
export const DROP_ALL: Invalidation = { drop: 'all' };

/** A channel of the process's notification connection, and what each of its payloads drops. */
export interface CacheChannel {
  readonly channel: string;
  readonly invalidates: (payload: string | undefined) => Invalidation;
}

/**
 * When the cache may answer from memory:
 * - `while-listening`: only while the notification connection is up and listens on every
 *   channel (docs/operating.md "The LISTEN connection"). Losing it stops serving and empties
 *   the cache; getting it back (a resync: notifications may have been missed) empties it and
 *   serves again. Without a connection (PGlite) it never serves: every read loads.
 * - `always`: also while the connection is down and without one (PGlite, one process, whose
 *   own writes invalidate locally); the TTL bounds how stale an entry gets while a replica's
 *   notification cannot arrive, and a resync empties it.
 */
export type ServePolicy = 'while-listening' | 'always';

export interface NotifiedCacheOptions<V, P> {
  /** The `cache` label of `broker_cache_requests_total`. */
  readonly name: CacheName;
  /** At most this many entries; storing one more drops the oldest. */
  readonly maxEntries: number;
  /** The backstop, not the mechanism: an entry is loaded again after this long whatever was notified. */
  readonly ttlMs: number;
  /** The process's notification connection; undefined on PGlite. */
  readonly listen: PostgresListenConnection | undefined;
  readonly channels: readonly CacheChannel[];
  readonly serve: ServePolicy;
  /** Whether a loaded value is kept (default: every value; `undefined` never is). */
  readonly keep?: (value: V) => boolean;
  /** The value's own expiry (epoch ms), when earlier than the TTL; undefined: none. */
  readonly expiresAtMs?: (value: V) => number | undefined;
  /** Whether the entry stored under a key answers this probe (default: it does); one that does not is dropped. */
  readonly matches?: (value: V, probe: P) => boolean;
  /** Secondary indexes by name (e.g. principal, family): the index value of an entry, undefined when none. */
  readonly indexes?: Readonly<Record<string, (key: string, value: V) => string | undefined>>;
  /** Concurrent loads of one key share one load (a whole-table snapshot). */
  readonly singleFlight?: boolean;
}

interface Entry<V> {
  readonly value: V;
  readonly expiresAtMs: number;
}

interface Index<V> {
  readonly of: (key: string, value: V) => string | undefined;
  readonly keys: Map<string, Set<string>>;
}

interface Flight<V> {
  readonly generation: number;
  readonly done: Promise<V | undefined>;
}

/**
 * A process-local cache kept current by PostgreSQL notifications, the one policy behind the
 * hot paths' caches (clients, protected resources, the token exchange's context, the token
 * state introspection reads):
 *
 * - It listens on its channels from its first lookup (a process that never reads holds no
 *   LISTEN), and each notification's payload names what to drop: one key, the entries of
 *   one index value (a person, a refresh token family), or everything.
 * - The writing process forgets at once at commit (`forgetKey`, `forgetIndexed`, `forgetAll`),
 *   whatever the order in which its write's answer and its own notification arrive.
 * - A load that overlapped an invalidation is returned to its caller but not stored
 *   (generation check): it may have read the rows before the change committed.
 * - Entries expire after the TTL, or earlier at their own expiry; at most `maxEntries` are
 *   kept, the oldest stored going first.
 * - Hits and misses are counted while it serves (`metrics`, set by `Database.instrument`).
 *
 * A hit is one map lookup and one expiry comparison; nothing is allocated for it.
 */
export class NotifiedCache<V, P = undefined> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly indexes = new Map<string, Index<V>>();
  private readonly flights = new Map<string, Flight<V>>();
  private generation = 0;
  private serving: boolean;
  private started = false;
  /** Counts hits and misses when set. */
  metrics: BrokerMetrics | undefined;

  constructor(private readonly options: NotifiedCacheOptions<V, P>) {
    this.serving = options.serve === 'always';
    for (const [name, of] of Object.entries(options.indexes ?? {})) this.indexes.set(name, { of, keys: new Map() });
  }

  /** Whether lookups are answered from memory now. */
  get active(): boolean {
    return this.serving;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The value stored under `key` if it is fresh at `nowMs` and answers `probe` (a hit), else
   * undefined (a miss: `load` it). The first call starts listening.
   */
  lookup(key: string, nowMs: number, probe: P): V | undefined {
    if (!this.started) this.start();
    if (!this.serving) return undefined;
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expiresAtMs > nowMs && (this.options.matches === undefined || this.options.matches(hit.value, probe))) {
        this.metrics?.cacheLookup(this.options.name, true);
        return hit.value;
      }
      this.drop(key);
    }
    this.metrics?.cacheLookup(this.options.name, false);
    return undefined;
  }

  /** What `load` finds for `key`, stored (until the TTL or its own expiry) unless it is not to be kept or raced an invalidation. */
  load(key: string, nowMs: number, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (!this.options.singleFlight) return this.loadAndStore(key, nowMs, load);
    const generation = this.generation;
    const flight = this.flights.get(key);
    if (flight?.generation === generation) return flight.done;
    const done = this.loadAndStore(key, nowMs, load).finally(() => {
      if (this.flights.get(key)?.done === done) this.flights.delete(key);
    });
    this.flights.set(key, { generation, done });
    return done;
  }

  /** `lookup`, then `load` on a miss. */
  read(key: string, nowMs: number, probe: P, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.lookup(key, nowMs, probe);
    return hit !== undefined ? Promise.resolve(hit) : this.load(key, nowMs, load);
  }

  /** Forgets `key` (a write committed here, or its notification arrived). */
  forgetKey(key: string): void {
    this.generation += 1;
    this.drop(key);
  }

  /** Forgets every entry whose `index` is `value`. */
  forgetIndexed(index: string, value: string): void {
    this.generation += 1;
    const keys = this.index(index).keys;
    const matching = keys.get(value);
    if (matching === undefined) return;
    keys.delete(value);
    // `drop` removes each key from this set while it is iterated, which a Set allows.
    for (const key of matching) this.drop(key);
  }

  /** Forgets everything. */
  forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
    for (const index of this.indexes.values()) index.keys.clear();
  }

  /** Forgets what an invalidation names. */
  invalidate(invalidation: Invalidation): void {
    if (invalidation.drop === 'key') this.forgetKey(invalidation.key);
    else if (invalidation.drop === 'index') this.forgetIndexed(invalidation.index, invalidation.value);
    else this.forgetAll();
  }

  private async loadAndStore(key: string, nowMs: number, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.generation;
    const value = await load();
    if (
      value !== undefined &&
      this.serving &&
      generation === this.generation &&
      (this.options.keep === undefined || this.options.keep(value))
    ) {
      const own = this.options.expiresAtMs?.(value);
      const backstop = nowMs + this.options.ttlMs;
      this.store(key, { value, expiresAtMs: own !== undefined && own < backstop ? own : backstop });
    }
    return value;
  }

  private store(key: string, entry: Entry<V>): void {
    // Stored again: it becomes the newest.
    this.drop(key);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.drop(oldest.value);
    }
    this.entries.set(key, entry);
    for (const index of this.indexes.values()) {
      const value = index.of(key, entry.value);
      if (value === undefined) continue;
      let keys = index.keys.get(value);
      if (keys === undefined) {
        keys = new Set();
        index.keys.set(value, keys);
      }
      keys.add(key);
    }
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    for (const index of this.indexes.values()) {
      const value = index.of(key, entry.value);
      if (value === undefined) continue;
      const keys = index.keys.get(value);
      keys?.delete(key);
      if (keys?.size === 0) index.keys.delete(value);
    }
  }

  private index(name: string): Index<V> {
    const index = this.indexes.get(name);
    if (index === undefined) throw new Error(`${this.options.name} cache has no index ${name}`);
    return index;
  }

  private start(): void {
    this.started = true;
    const { listen, channels, serve } = this.options;
    if (listen === undefined || channels.length === 0) return;
    // Notifications sent while the connection was down are lost: anything kept may be stale.
    const resume = (): void => {
      this.forgetAll();
      this.serving = serve === 'always' || channels.every(({ channel }) => listen.isListening(channel));
    };
    const lost =
      serve === 'always'
        ? // Until the reconnect the TTL bounds staleness; the reconnect's resync then empties it.
          (): void => undefined
        : (): void => {
            this.serving = false;
            this.forgetAll();
          };
    const subscriptions = channels.map(({ channel, invalidates }) =>
      listen.subscribe(channel, {
        notify: (payload) => this.invalidate(invalidates(payload)),
        resync: resume,
        lost,
      }),
    );
    // Once every LISTEN has run: anything read before may have missed a change, so start empty.
    void Promise.all(subscriptions).then(resume, serve === 'always' ? resume : lost);
  }
}
