import type { DataSource } from 'typeorm';
import type { ClientRecord } from './agent.repository';

/**
 * How long a token-endpoint client (agent + credential digest) is served from memory.
 * Writes through this process (agent replaced or deleted, credential created, rotated or
 * deleted) clear it at once; on PostgreSQL another replica's write clears it when its
 * `NOTIFY registry_changed` arrives (triggers, migration RegistryNotifications), and after
 * the notification connection was lost. This bound is the backstop, not the mechanism.
 */
export const CLIENT_CACHE_TTL_MS = 5_000;
const CLIENT_CACHE_ENTRIES = 10_000;

interface Entry {
  readonly record: ClientRecord;
  readonly expiresAtMs: number;
}

/**
 * The clients of one database, shared by both servers of the process (the admin server's
 * writes clear what the end-user server reads). Only found clients are cached (unknown
 * ids cannot fill it), at most `CLIENT_CACHE_ENTRIES`; a read that raced a write is not
 * stored (generation check).
 */
export class ClientCache {
  private static readonly byDatabase = new WeakMap<DataSource, ClientCache>();
  private readonly entries = new Map<string, Entry>();
  private generation = 0;

  static of(dataSource: DataSource): ClientCache {
    let cache = ClientCache.byDatabase.get(dataSource);
    if (cache === undefined) {
      cache = new ClientCache();
      ClientCache.byDatabase.set(dataSource, cache);
    }
    return cache;
  }

  async read(id: string, load: () => Promise<ClientRecord | undefined>): Promise<ClientRecord | undefined> {
    const now = Date.now();
    const hit = this.entries.get(id);
    if (hit !== undefined && hit.expiresAtMs > now) return hit.record;
    const generation = this.generation;
    const record = await load();
    if (record !== undefined && generation === this.generation) {
      if (this.entries.size >= CLIENT_CACHE_ENTRIES) this.entries.clear();
      this.entries.set(id, { record, expiresAtMs: now + CLIENT_CACHE_TTL_MS });
    }
    return record;
  }

  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
