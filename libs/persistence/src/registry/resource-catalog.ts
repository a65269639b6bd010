import type { ProtectedResource } from '@broker/domain';
import type { BrokerMetrics } from '@broker/telemetry';
import { DROP_ALL, NotifiedCache } from '../cache/notified-cache';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { REGISTRY_CHANNEL } from './registry-channel';

/**
 * How long the protected-resource catalog is served from memory. Writes through this process
 * clear it at once; on PostgreSQL another replica's write clears it when its
 * `NOTIFY registry_changed` arrives, and so does the notification connection coming back
 * after it was lost. This bound is the backstop, not the mechanism (as `CLIENT_CACHE_TTL_MS`).
 */
export const RESOURCE_CATALOG_TTL_MS = 5_000;

/** The catalog is one entry: the whole table. */
const SNAPSHOT = '';

type ByUri = ReadonlyMap<string, ProtectedResource>;

/**
 * The protected resources of one database, by URI, for the authorization and token endpoints
 * (every request names its RFC 8707 `resource`). The table is small (one row per MCP server or
 * API an administrator registered), so the whole of it is one snapshot, loaded by one query
 * whatever the number of concurrent lookups, then each lookup is a map read. One instance per
 * process, owned by `Database` (the admin server's writes clear what the end-user server
 * reads). A `NotifiedCache` of one entry, serving like `ClientCache`: a load that raced a
 * write is used once but not kept (generation check).
 */
export class ResourceCatalog {
  private readonly cache: NotifiedCache<ByUri>;

  constructor(listen: PostgresListenConnection | undefined) {
    this.cache = new NotifiedCache<ByUri>({
      name: 'resource_catalog',
      maxEntries: 1,
      ttlMs: RESOURCE_CATALOG_TTL_MS,
      listen,
      serve: 'always',
      channels: [{ channel: REGISTRY_CHANNEL, invalidates: () => DROP_ALL }],
      singleFlight: true,
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
   * The resource registered with exactly this URI (RFC 8707 §2: compared as sent), or undefined.
   * `nowMs` comes from the caller's injected `Clock`; `load` reads the whole table.
   */
  async byUri(
    uri: string,
    nowMs: number,
    load: () => Promise<readonly ProtectedResource[]>,
  ): Promise<ProtectedResource | undefined> {
    const snapshot =
      this.cache.lookup(SNAPSHOT, nowMs, undefined) ??
      (await this.cache.load(SNAPSHOT, nowMs, async () => byResourceUri(await load())));
    return snapshot?.get(uri);
  }

  /** Forgets the snapshot: a registry write happened here. */
  invalidate(): void {
    this.cache.forgetAll();
  }
}

function byResourceUri(resources: readonly ProtectedResource[]): ByUri {
  return new Map(resources.map((resource) => [resource.resourceUri, resource] as const));
}
