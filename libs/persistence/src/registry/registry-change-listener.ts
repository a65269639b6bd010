import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';

/** What the listener clears: the client cache, the protected-resource catalog. */
export interface RegistryReadCache {
  invalidate(): void;
}

/**
 * The channel of committed registry changes the hot paths read from memory: token-endpoint
 * clients (agents, assignments, secrets; migration RegistryNotifications) and protected
 * resources (migration ProtectedResources).
 */
export const REGISTRY_CHANNEL = 'registry_changed';

/**
 * Clears the process's client cache and resource catalog when another replica changes a
 * client or a protected resource: `LISTEN
 * registry_changed` on the process's one notification connection (PostgreSQL). PGlite is
 * one process by construction, so this process's own writes are all there is, and they
 * clear the cache themselves.
 *
 * It starts with the first client lookup rather than at boot: a cache that never filled
 * needs no notifications, so a process serving only the admin API holds no LISTEN
 * connection. Once `LISTEN` runs the cache is cleared, dropping anything read before it.
 */
export class RegistryChangeListener {
  private started = false;

  constructor(
    private readonly connection: PostgresListenConnection | undefined,
    private readonly caches: readonly RegistryReadCache[],
  ) {}

  /**
   * Idempotent and synchronous: one boolean test on the token endpoint's path after the first
   * call. Either cache's first lookup starts it; the notification clears both.
   */
  ensureStarted(): void {
    if (this.started || this.connection === undefined) return;
    this.started = true;
    const invalidate = (): void => {
      for (const cache of this.caches) cache.invalidate();
    };
    void this.connection
      .subscribe(REGISTRY_CHANNEL, {
        notify: invalidate,
        // Notifications sent while the connection was down are lost: anything cached may be stale.
        resync: invalidate,
        // Until the reconnect, the 5 s TTL bounds staleness; the reconnect then clears the cache.
        lost: () => undefined,
      })
      .then(invalidate, invalidate);
  }
}
