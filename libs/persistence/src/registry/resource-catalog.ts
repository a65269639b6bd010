import type { ProtectedResource } from '@broker/domain';

/**
 * How long the protected-resource catalog is served from memory. Writes through this process
 * clear it at once; on PostgreSQL another replica's write clears it when its
 * `NOTIFY registry_changed` arrives (`RegistryChangeListener`), and after the notification
 * connection was lost. This bound is the backstop, not the mechanism (as `CLIENT_CACHE_TTL_MS`).
 */
export const RESOURCE_CATALOG_TTL_MS = 5_000;

interface Snapshot {
  readonly byUri: ReadonlyMap<string, ProtectedResource>;
  readonly expiresAtMs: number;
}

/**
 * The protected resources of one database, by URI, for the authorization and token endpoints
 * (every request names its RFC 8707 `resource`). The table is small (one row per MCP server or
 * API an administrator registered), so the whole of it is one snapshot, loaded by one query
 * whatever the number of concurrent lookups, then each lookup is a map read. One instance per
 * process, owned by `Database` (the admin server's writes clear what the end-user server
 * reads). A load that raced a write is used once but not kept (generation check).
 */
export class ResourceCatalog {
  private snapshot: Snapshot | undefined;
  private loading:
    { readonly generation: number; readonly done: Promise<ReadonlyMap<string, ProtectedResource>> } | undefined;
  private generation = 0;

  /**
   * The resource registered with exactly this URI (RFC 8707 §2: compared as sent), or undefined.
   * `nowMs` comes from the caller's injected `Clock`; `load` reads the whole table.
   */
  async byUri(
    uri: string,
    nowMs: number,
    load: () => Promise<readonly ProtectedResource[]>,
  ): Promise<ProtectedResource | undefined> {
    const snapshot = this.snapshot;
    if (snapshot !== undefined && snapshot.expiresAtMs > nowMs) return snapshot.byUri.get(uri);
    return (await this.reload(nowMs, load)).get(uri);
  }

  /** Forgets the snapshot: a registry write happened here or on another replica. */
  invalidate(): void {
    this.generation += 1;
    this.snapshot = undefined;
    this.loading = undefined;
  }

  private reload(
    nowMs: number,
    load: () => Promise<readonly ProtectedResource[]>,
  ): Promise<ReadonlyMap<string, ProtectedResource>> {
    const generation = this.generation;
    if (this.loading?.generation === generation) return this.loading.done;
    const done = load().then(
      (resources) => {
        const byUri = new Map(resources.map((resource) => [resource.resourceUri, resource] as const));
        if (generation === this.generation) {
          this.snapshot = { byUri, expiresAtMs: nowMs + RESOURCE_CATALOG_TTL_MS };
          this.loading = undefined;
        }
        return byUri;
      },
      (error: unknown) => {
        if (this.loading?.generation === generation) this.loading = undefined;
        throw error;
      },
    );
    this.loading = { generation, done };
    return done;
  }
}
