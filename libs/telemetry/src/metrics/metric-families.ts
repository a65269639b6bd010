import { collectDefaultMetrics, Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Seconds: from a fast cache hit (~0.5 ms) to a provider's timeout (10 s). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Reads that only the collect callbacks need (set at boot by the owners of the data). */
export interface FamilySources {
  sessionsNeedingReauthentication(): Promise<number | undefined>;
  approvalsPending(): Promise<number | undefined>;
  approvalWaiters(): number;
  keySetAges(set: (name: string, seconds: number) => void): void;
  pool(): { readonly inUse: number; readonly idle: number; readonly waiting: number } | undefined;
  listenDown(): boolean;
}

/**
 * The catalogue (docs/operating.md, "Metrics"), registered once on the process's
 * registry: names, types and label names are part of the dashboards' and alerts' contract.
 */
export function createFamilies(registry: Registry, sources: FamilySources) {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  return {
    httpRequestDuration: new Histogram({
      name: 'broker_http_request_duration_seconds',
      help: 'HTTP requests by server, route template, method and status class',
      labelNames: ['server', 'route', 'method', 'status_class'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    tokenRequests: new Counter({
      name: 'broker_token_requests_total',
      help: 'POST /oauth2/token requests by grant type and outcome (ok or the OAuth error code)',
      labelNames: ['grant_type', 'outcome'] as const,
      registers,
    }),
    tokenRequestsUnauthenticated: new Counter({
      name: 'broker_token_requests_unauthenticated_total',
      help: 'Token exchange and impersonation requests refused before a client assertion authenticated them, by grant and OAuth error code (no ledger event)',
      labelNames: ['grant', 'reason'] as const,
      registers,
    }),
    tokenExchangeDuration: new Histogram({
      name: 'broker_token_exchange_duration_seconds',
      help: 'RFC 8693 token exchange duration by outcome',
      labelNames: ['outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    tokenRevocations: new Counter({
      name: 'broker_token_revocations_total',
      help: "POST /oauth2/revoke requests that authenticated, by what they revoked (RFC 7009; none: unknown or another client's token)",
      labelNames: ['token_type'] as const,
      registers,
    }),
    tokenIntrospections: new Counter({
      name: 'broker_token_introspections_total',
      help: 'POST /oauth2/introspect answers by active (RFC 7662)',
      labelNames: ['active'] as const,
      registers,
    }),
    impersonationDecisions: new Counter({
      name: 'broker_impersonation_decisions_total',
      help: 'User impersonation decisions by outcome',
      labelNames: ['outcome'] as const,
      registers,
    }),
    vaultRefreshes: new Counter({
      name: 'broker_vault_refreshes_total',
      help: 'Third-party token refreshes by outcome and trigger',
      labelNames: ['outcome', 'trigger'] as const,
      registers,
    }),
    vaultRefreshDuration: new Histogram({
      name: 'broker_vault_refresh_duration_seconds',
      help: 'Provider refresh round trip by trigger',
      labelNames: ['trigger'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    providerHttpErrors: new Counter({
      name: 'broker_provider_http_errors_total',
      help: "Failures of providers' token endpoints by kind",
      labelNames: ['kind'] as const,
      registers,
    }),
    sessionsNeedingReauthentication: new Gauge({
      name: 'broker_sessions_needing_reauthentication',
      help: 'Third-party sessions marked as needing re-authentication (read from the database, cached 10 s)',
      // Every cluster worker reads the same database count; summing would multiply it.
      aggregator: 'max',
      registers,
      async collect() {
        const value = await sources.sessionsNeedingReauthentication();
        if (value !== undefined) this.set(value);
      },
    }),
    cacheRequests: new Counter({
      name: 'broker_cache_requests_total',
      help: 'Cache lookups by cache and result',
      labelNames: ['cache', 'result'] as const,
      registers,
    }),
    keySetFetchFailures: new Counter({
      name: 'broker_key_set_fetch_failures_total',
      help: 'Remote JWKS fetch failures by key set',
      labelNames: ['key_set'] as const,
      registers,
    }),
    keySetAge: new Gauge({
      name: 'broker_key_set_seconds_since_last_success',
      help: 'Seconds since the last successful fetch of a remote JWKS, by key set (since the first attempt while none succeeded)',
      // Across cluster workers, the stalest one's age.
      aggregator: 'max',
      labelNames: ['key_set'] as const,
      registers,
      collect() {
        this.reset();
        sources.keySetAges((name, seconds) => this.labels(name).set(seconds));
      },
    }),
    approvalsPending: new Gauge({
      name: 'broker_approvals_pending',
      help: 'Pending tool approvals (read from the database, cached 10 s)',
      // Every cluster worker reads the same database count; summing would multiply it.
      aggregator: 'max',
      registers,
      async collect() {
        const value = await sources.approvalsPending();
        if (value !== undefined) this.set(value);
      },
    }),
    approvalWaiters: new Gauge({
      name: 'broker_approval_waiters',
      help: 'Approval long-polls held now',
      registers,
      collect() {
        this.set(sources.approvalWaiters());
      },
    }),
    approvalWakeups: new Counter({
      name: 'broker_approval_wakeups_total',
      help: 'Approval long-polls woken by a change',
      registers,
    }),
    dbPoolConnections: new Gauge({
      name: 'broker_db_pool_connections',
      help: 'Database connections by state (PostgreSQL pool; PGlite: its one exclusive connection)',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const pool = sources.pool();
        if (pool === undefined) return;
        this.labels('in_use').set(pool.inUse);
        this.labels('idle').set(pool.idle);
        this.labels('waiting').set(pool.waiting);
      },
    }),
    listenDown: new Gauge({
      name: 'broker_db_listen_down',
      help: 'LISTEN connection down or its heartbeat not verified (1): the caches it keeps current read the database',
      // Across cluster workers: 1 when any worker's is down.
      aggregator: 'max',
      registers,
      collect() {
        this.set(sources.listenDown() ? 1 : 0);
      },
    }),
    listenOutages: new Counter({
      name: 'broker_db_listen_outages_total',
      help: 'Times the LISTEN connection went down: closed, failed, or its heartbeat did not come back in time',
      registers,
    }),
    pgliteWait: new Histogram({
      name: 'broker_db_pglite_wait_seconds',
      help: "Wait for PGlite's exclusive connection",
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    // The activity ledger's hot-path queue.
    eventsWritten: new Counter({
      name: 'broker_events_written_total',
      help: 'Activity ledger events written by the hot-path queue (multi-row inserts)',
      registers,
    }),
    eventsDropped: new Counter({
      name: 'broker_events_dropped_total',
      help: 'Activity ledger hot-path events dropped because the queue was full (refused requests first, then the oldest)',
      registers,
    }),
  };
}

export type MetricFamilies = ReturnType<typeof createFamilies>;
