import type { Agent } from '@broker/domain';
import type { BrokerMetrics } from '@broker/telemetry';
import { DROP_ALL, NotifiedCache } from '../cache/notified-cache';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { REGISTRY_CHANNEL } from './registry-channel';

/**
 * How long a token-endpoint client (agent + credential digest) is served from memory.
 * Writes through this process (agent replaced or deleted, credential created, rotated or
 * deleted) clear it at once; on PostgreSQL another replica's write clears it when its
 * `NOTIFY registry_changed` arrives, and so does the notification connection coming back
 * after it was lost. This bound is the backstop, not the mechanism.
 */
export const CLIENT_CACHE_TTL_MS = 5_000;
const CLIENT_CACHE_ENTRIES = 10_000;

/** An agent as a token-endpoint client: with its credential digest when it has broker-issued credentials. */
export interface ClientRecord {
  readonly agent: Agent;
  readonly secretSha256: Buffer | null;
}

/**
 * The clients of one database. One instance per process, owned by `Database` and injected
 * into the repositories of both servers (the admin server's writes clear what the end-user
 * server reads). A `NotifiedCache` that serves on PGlite too and while the notification
 * connection is down (the TTL bounds staleness then). Only found clients are cached (unknown
 * ids cannot fill it), at most `CLIENT_CACHE_ENTRIES`; a read that raced a write is not
 * stored (generation check). The first lookup starts listening for `registry_changed`, so a
 * process serving only the admin API holds no LISTEN connection for it.
 */
export class ClientCache {
  private readonly cache: NotifiedCache<ClientRecord>;

  constructor(listen: PostgresListenConnection | undefined) {
    this.cache = new NotifiedCache<ClientRecord>({
      name: 'client',
      maxEntries: CLIENT_CACHE_ENTRIES,
      ttlMs: CLIENT_CACHE_TTL_MS,
      listen,
      serve: 'always',
      channels: [{ channel: REGISTRY_CHANNEL, invalidates: () => DROP_ALL }],
    });
  }

  /** Counts hits and misses when set (`Database.instrument`). */
  get metrics(): BrokerMetrics | undefined {
    return this.cache.metrics;
  }

  set metrics(metrics: BrokerMetrics | undefined) {
    this.cache.metrics = metrics;
  }

  /**
   * The cached client, or what `load` finds (then cached until `nowMs` + the TTL). `nowMs`
   * comes from the caller's injected `Clock` (time is injected).
   */
  read(id: string, nowMs: number, load: () => Promise<ClientRecord | undefined>): Promise<ClientRecord | undefined> {
    return this.cache.read(id, nowMs, undefined, load);
  }

  /** Forgets every client: a registry write happened here. */
  invalidate(): void {
    this.cache.forgetAll();
  }
}
