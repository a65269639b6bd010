import type { BrokerMetrics } from '@broker/telemetry';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import type { GrantDelegation } from '@broker/domain';
import type { ThirdPartySessionRecord } from './session.repository';

/** What the token exchange needs from the database, read at once (`ExchangeLookup`). */
export interface ExchangeContext {
  /** The service owning the resource. */
  readonly serviceId: string;
  /** The delegations of the principal's active grant for the agent covering that service (empty: none). */
  readonly delegations: GrantDelegation[];
  /** The principal's session with the service, tokens still sealed. */
  readonly session: ThirdPartySessionRecord | undefined;
}

/**
 * The channel of committed changes to what the token exchange reads (grants, their
 * delegations, third-party sessions, services and their protected resources); migration
 * ExchangeNotifications. The payload is the principal whose rows changed, or empty when a
 * service changed (every entry is dropped).
 */
export const EXCHANGE_CHANNEL = 'exchange_changed';

/** At most this many (principal, agent, resource) contexts are kept; the oldest goes first. */
export const EXCHANGE_CACHE_ENTRIES = 50_000;
/**
 * A backstop, not the mechanism: an entry is read again from the database after this long
 * even if no notification said it changed (a row written with triggers disabled by hand).
 */
export const EXCHANGE_CACHE_TTL_MS = 60_000;

interface Entry {
  readonly principal: string;
  readonly context: ExchangeContext;
  /** The earlier of the grant's `valid_until` and the backstop TTL. */
  readonly expiresAtMs: number;
}

/**
 * What the token exchange read for a (principal, agent, resource): the service, the active
 * grant's delegations and the sealed session, kept in memory so that a gateway's repeated
 * exchange for the same person costs no database round trip (docs: docs/oauth2.md "The hot path").
 *
 * It serves only while this process listens for `exchange_changed` on its notification
 * connection (PostgreSQL): every committed change to a grant, a delegation or a session
 * notifies the principal, a service or resource change notifies everyone, and each
 * replica drops the matching entries when the notification arrives, one round trip from
 * the committing backend; this process's own writes come back the same way. While the
 * connection is down (closed, or open but its heartbeat not back: see
 * `PostgresListenConnection`) nothing is served from memory (every lookup reads the database) and
 * everything read before is dropped, since notifications may have been missed. A grant's
 * expiry is checked against the caller's clock on every hit. Only complete contexts (a
 * grant delegating the service and a session) are kept: refusals always read the database.
 * A read that overlapped an invalidation is not stored (generation check).
 *
 * On PGlite (one process, no LISTEN) there is no cache: `listen` is undefined.
 */
export class ExchangeContextCache {
  private readonly entries = new Map<string, Entry>();
  private readonly keysByPrincipal = new Map<string, Set<string>>();
  private generation = 0;
  private serving = false;
  private started = false;
  /** Counts hits and misses when set (`Database.instrument`). */
  metrics: BrokerMetrics | undefined;

  constructor(private readonly listen: PostgresListenConnection | undefined) {}

  /** Whether lookups are answered from memory now (the notification connection is listening). */
  get active(): boolean {
    return this.serving;
  }

  /**
   * The context for the key, from memory or from `load` (then kept when complete). The
   * first call starts listening; until `LISTEN` has run, every call loads.
   */
  async read(
    resource: string,
    principal: string,
    agentId: string,
    nowMs: number,
    load: () => Promise<{ context: ExchangeContext; grantValidUntil: Date | null } | undefined>,
  ): Promise<ExchangeContext | undefined> {
    if (!this.started) this.start();
    if (!this.serving) return (await load())?.context;
    const key = `${principal}\u0000${agentId}\u0000${resource}`;
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expiresAtMs > nowMs) {
        this.metrics?.cacheLookup('exchange_context', true);
        return hit.context;
      }
      this.forget(key, hit.principal);
    }
    this.metrics?.cacheLookup('exchange_context', false);
    const generation = this.generation;
    const loaded = await load();
    if (loaded === undefined) return undefined;
    const { context, grantValidUntil } = loaded;
    const complete = context.delegations.length > 0 && context.session !== undefined;
    if (complete && this.serving && generation === this.generation) {
      const expiresAtMs = Math.min(
        nowMs + EXCHANGE_CACHE_TTL_MS,
        grantValidUntil?.getTime() ?? Number.POSITIVE_INFINITY,
      );
      this.store(key, { principal, context, expiresAtMs });
    }
    return context;
  }

  private store(key: string, entry: Entry): void {
    if (this.entries.size >= EXCHANGE_CACHE_ENTRIES) {
      const oldest = this.entries.entries().next().value as [string, Entry];
      this.forget(oldest[0], oldest[1].principal);
    }
    this.entries.set(key, entry);
    let keys = this.keysByPrincipal.get(entry.principal);
    if (keys === undefined) {
      keys = new Set();
      this.keysByPrincipal.set(entry.principal, keys);
    }
    keys.add(key);
  }

  private forget(key: string, principal: string): void {
    this.entries.delete(key);
    const keys = this.keysByPrincipal.get(principal);
    keys?.delete(key);
    if (keys?.size === 0) this.keysByPrincipal.delete(principal);
  }

  /** A notification: the principal's rows changed (payload), or a service did (empty payload). */
  invalidate(principal: string | undefined): void {
    this.generation += 1;
    if (principal === undefined || principal === '') {
      this.entries.clear();
      this.keysByPrincipal.clear();
      return;
    }
    for (const key of this.keysByPrincipal.get(principal) ?? []) this.entries.delete(key);
    this.keysByPrincipal.delete(principal);
  }

  private start(): void {
    this.started = true;
    if (this.listen === undefined) return;
    const resume = (): void => {
      this.invalidate(undefined);
      this.serving = true;
    };
    const suspend = (): void => {
      this.serving = false;
      this.invalidate(undefined);
    };
    void this.listen
      .subscribe(EXCHANGE_CHANNEL, {
        notify: (payload) => this.invalidate(payload),
        // Notifications sent while the connection was down are lost: start again from empty.
        resync: resume,
        lost: suspend,
      })
      .then(
        // Once LISTEN has run: anything read before it may have missed a change, so start empty.
        () => {
          if (this.listen?.isListening(EXCHANGE_CHANNEL) === true) resume();
        },
        suspend,
      );
  }
}
