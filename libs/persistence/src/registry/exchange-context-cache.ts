import type { BrokerMetrics } from '@broker/telemetry';
import { DROP_ALL, NotifiedCache, type Invalidation } from '../cache/notified-cache';
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
  /** An administrator suspended the agent: the exchange is refused (docs/admin-api.md "Suspending an agent"). */
  readonly agentSuspended: boolean;
}

/**
 * The channel of committed changes to what the token exchange reads (grants, their
 * delegations, third-party sessions, services and their protected resources, an agent's
 * suspension); migrations ExchangeNotifications and AgentSuspension. The payload is the
 * principal whose rows changed, or empty when a service or an agent's suspension changed
 * (every entry is dropped).
 */
export const EXCHANGE_CHANNEL = 'exchange_changed';

/** At most this many (principal, agent, resource) contexts are kept; the oldest goes first. */
export const EXCHANGE_CACHE_ENTRIES = 50_000;
/**
 * A backstop, not the mechanism: an entry is read again from the database after this long
 * even if no notification said it changed (a row written with triggers disabled by hand).
 */
export const EXCHANGE_CACHE_TTL_MS = 60_000;

/** What the lookup loaded: the context, and the grant's end (the entry's own expiry). */
interface Loaded {
  readonly context: ExchangeContext;
  readonly grantValidUntil: Date | null;
}

/**
 * What the token exchange read for a (principal, agent, resource): the service, the active
 * grant's delegations and the sealed session, kept in memory so that a gateway's repeated
 * exchange for the same person costs no database round trip (docs: docs/oauth2.md "The hot path").
 * A `NotifiedCache` indexed by principal.
 *
 * It serves only while this process listens for `exchange_changed` on its notification
 * connection (PostgreSQL): every committed change to a grant, a delegation or a session
 * notifies the principal, a service or resource change notifies everyone, and each
 * replica drops the matching entries when the notification arrives, one round trip from
 * the committing backend; the writing process also drops them at commit (`invalidate`).
 * While the connection is down nothing is served from memory (every lookup reads the
 * database) and everything read before is dropped, since notifications may have been
 * missed. An entry expires at the grant's `valid_until`, checked against the caller's clock
 * on every hit. Only complete contexts (a grant delegating the service and a session, the
 * agent not suspended) are kept: refusals always read the database.
 *
 * On PGlite (one process, no LISTEN) there is no cache: `listen` is undefined.
 */
export class ExchangeContextCache {
  private readonly cache: NotifiedCache<Loaded>;

  constructor(listen: PostgresListenConnection | undefined) {
    this.cache = new NotifiedCache<Loaded>({
      name: 'exchange_context',
      maxEntries: EXCHANGE_CACHE_ENTRIES,
      ttlMs: EXCHANGE_CACHE_TTL_MS,
      listen,
      serve: 'while-listening',
      channels: [{ channel: EXCHANGE_CHANNEL, invalidates: principalChange }],
      keep: ({ context }) => context.delegations.length > 0 && context.session !== undefined && !context.agentSuspended,
      expiresAtMs: ({ grantValidUntil }) => grantValidUntil?.getTime(),
      indexes: { principal: (key) => key.slice(0, key.indexOf('\u0000')) },
    });
  }

  /** Counts hits and misses when set (`Database.instrument`). */
  get metrics(): BrokerMetrics | undefined {
    return this.cache.metrics;
  }

  set metrics(metrics: BrokerMetrics | undefined) {
    this.cache.metrics = metrics;
  }

  /** Whether lookups are answered from memory now (the notification connection is listening). */
  get active(): boolean {
    return this.cache.active;
  }

  get size(): number {
    return this.cache.size;
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
    load: () => Promise<Loaded | undefined>,
  ): Promise<ExchangeContext | undefined> {
    const key = `${principal}\u0000${agentId}\u0000${resource}`;
    const hit = this.cache.lookup(key, nowMs, undefined);
    if (hit !== undefined) return hit.context;
    return (await this.cache.load(key, nowMs, load))?.context;
  }

  /** The principal's rows changed (a notification's payload, or a write committed here), or a service did (empty or undefined). */
  invalidate(principal: string | undefined): void {
    this.cache.invalidate(principalChange(principal));
  }
}

/**
 * What an `exchange_changed` payload drops: the entries of the principal whose rows changed
 * (index `principal`), or everything when it is empty (a service changed).
 */
export function principalChange(principal: string | undefined): Invalidation {
  return principal === undefined || principal === ''
    ? DROP_ALL
    : { drop: 'index', index: 'principal', value: principal };
}
