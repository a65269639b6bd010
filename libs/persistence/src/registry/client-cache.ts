import type { Agent } from '@broker/domain';
import type { BrokerMetrics } from '@broker/telemetry';

/**
 * How long a token-endpoint client (agent + credential digest) is served from memory.
 * Writes through this process (agent replaced or deleted, credential created, rotated or
 * deleted) clear it at once; on PostgreSQL another replica's write clears it when its
 * `NOTIFY registry_changed` arrives (`RegistryChangeListener`), and after the notification
 * connection was lost. This bound is the backstop, not the mechanism.
 */
export const CLIENT_CACHE_TTL_MS = 5_000;
const CLIENT_CACHE_ENTRIES = 10_000;

/** An agent as a token-endpoint client: with its credential digest when it has broker-issued credentials. */
export interface ClientRecord {
  readonly agent: Agent;
  readonly secretSha256: Buffer | null;
}

interface Entry {
  readonly record: ClientRecord;
  readonly expiresAtMs: number;
}

/**
 * The clients of one database. One instance per process, owned by `Database` and injected
 * into the repositories of both servers (the admin server's writes clear what the end-user
 * server reads). Only found clients are cached (unknown ids cannot fill it), at most
 * `CLIENT_CACHE_ENTRIES`; a read that raced a write is not stored (generation check).
 */
export class ClientCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  /** Counts hits and misses when set (`Database.instrument`). */
  metrics: BrokerMetrics | undefined;

  /**
   * The cached client, or what `load` finds (then cached until `nowMs` + the TTL). `nowMs`
   * comes from the caller's injected `Clock` (time is injected).
   */
  async read(
    id: string,
    nowMs: number,
    load: () => Promise<ClientRecord | undefined>,
  ): Promise<ClientRecord | undefined> {
    const hit = this.entries.get(id);
    if (hit !== undefined && hit.expiresAtMs > nowMs) {
      this.metrics?.cacheLookup('client', true);
      return hit.record;
    }
    this.metrics?.cacheLookup('client', false);
    const generation = this.generation;
    const record = await load();
    if (record !== undefined && generation === this.generation) {
      if (this.entries.size >= CLIENT_CACHE_ENTRIES) this.entries.clear();
      this.entries.set(id, { record, expiresAtMs: nowMs + CLIENT_CACHE_TTL_MS });
    }
    return record;
  }

  /** Forgets every client: a registry write happened here or on another replica. */
  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
