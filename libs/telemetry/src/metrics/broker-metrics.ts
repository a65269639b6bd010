import { Registry, type Counter } from 'prom-client';
import { CachedReading } from './cached-reading';
import { CLUSTER_METRICS_CONTENT_TYPE, inClusterWorker, scrapeCluster } from './cluster-aggregation';
import { HistogramHttpServerMetrics, NO_HTTP_SERVER_METRICS, type HttpServerMetrics } from './http-server-metrics';
import { KeySetTracker, keySetAges, NO_KEY_SET_METRICS, type KeySetMetrics } from './key-set-metrics';
import { createFamilies, type MetricFamilies } from './metric-families';
import {
  CACHE_NAMES,
  GRANT_TYPE_LABELS,
  grantTypeLabel,
  IMPERSONATION_OUTCOMES,
  PROVIDER_ERROR_KINDS,
  REFRESH_OUTCOMES,
  REFUSAL_LABELS,
  refusalLabel,
  REFRESH_TRIGGERS,
  REVOKED_TOKEN_TYPES,
  TOKEN_OUTCOME_LABELS,
  tokenOutcomeLabel,
  UNAUTHENTICATED_GRANTS,
  type CacheName,
  type ImpersonationOutcome,
  type KeySetName,
  type ProviderErrorKind,
  type RefreshOutcome,
  type RefreshTrigger,
  type RevokedTokenType,
  type ServerLabel,
  type UnauthenticatedGrant,
} from './metric-labels';

/** Database reads behind the gauges, passed in at boot by persistence (telemetry never imports it). */
export interface DatabaseReaders {
  readonly sessionsNeedingReauthentication: () => Promise<number>;
  readonly approvalsPending: () => Promise<number>;
  /** The pool's connections now (PostgreSQL's pg pool, or PGlite's one connection). */
  readonly pool: () => { readonly inUse: number; readonly idle: number; readonly waiting: number };
}

/** What one scrape answers: prom-client's text exposition format. */
export interface Scrape {
  readonly contentType: string;
  readonly body: string;
}

/** Label children of a two-label family, built once: `[first][second]`. */
function table<A extends string, B extends string, C>(
  first: readonly A[],
  second: readonly B[],
  child: (a: A, b: B) => C,
): Record<A, Record<B, C>> {
  return Object.fromEntries(first.map((a) => [a, Object.fromEntries(second.map((b) => [b, child(a, b)]))])) as Record<
    A,
    Record<B, C>
  >;
}

function row<A extends string, C>(keys: readonly A[], child: (a: A) => C): Record<A, C> {
  return Object.fromEntries(keys.map((a) => [a, child(a)])) as Record<A, C>;
}

/** A counter child exposed from boot at 0, so `rate()` and alerts see the series before its first event. */
function zeroed(child: Counter.Internal): Counter.Internal {
  child.inc(0);
  return child;
}

/** The hot-path children, built once at boot: counting is a property read and an add. */
function buildChildren(f: MetricFamilies) {
  return {
    tokenRequests: table(GRANT_TYPE_LABELS, TOKEN_OUTCOME_LABELS, (g, o) => zeroed(f.tokenRequests.labels(g, o))),
    tokenRequestsUnauthenticated: table(UNAUTHENTICATED_GRANTS, REFUSAL_LABELS, (g, r) =>
      zeroed(f.tokenRequestsUnauthenticated.labels(g, r)),
    ),
    tokenExchangeDuration: row(TOKEN_OUTCOME_LABELS, (o) => f.tokenExchangeDuration.labels(o)),
    impersonation: row(IMPERSONATION_OUTCOMES, (o) => zeroed(f.impersonationDecisions.labels(o))),
    revocations: row(REVOKED_TOKEN_TYPES, (t) => zeroed(f.tokenRevocations.labels(t))),
    introspections: {
      true: zeroed(f.tokenIntrospections.labels('true')),
      false: zeroed(f.tokenIntrospections.labels('false')),
    },
    vaultRefreshes: table(REFRESH_OUTCOMES, REFRESH_TRIGGERS, (o, t) => zeroed(f.vaultRefreshes.labels(o, t))),
    vaultRefreshDuration: row(REFRESH_TRIGGERS, (t) => f.vaultRefreshDuration.labels(t)),
    providerErrors: row(PROVIDER_ERROR_KINDS, (k) => zeroed(f.providerHttpErrors.labels(k))),
    cacheHits: row(CACHE_NAMES, (c) => zeroed(f.cacheRequests.labels(c, 'hit'))),
    cacheMisses: row(CACHE_NAMES, (c) => zeroed(f.cacheRequests.labels(c, 'miss'))),
  };
}

interface Enabled {
  readonly families: MetricFamilies;
  readonly children: ReturnType<typeof buildChildren>;
}

/**
 * The broker's Prometheus metrics: one registry per process, every family
 * created once at boot, so that counting on the hot path is a label lookup and an add.
 * Labels carry only values the code chooses from a fixed set (route templates, grant
 * types, OAuth error codes, outcomes; see `metric-labels.ts`): never a principal, token,
 * agent or client id, or anything a caller writes freely. When `telemetry.metrics.enabled`
 * is false the same methods do nothing, nothing is registered and `/metrics` is not served.
 */
export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly on: Enabled | undefined;
  private readonly sessionsNeedingReauthentication = new CachedReading();
  private readonly approvalsPending = new CachedReading();
  private readonly waiterSources: (() => number)[] = [];
  private readonly keySets: KeySetTracker[] = [];
  private pool: DatabaseReaders['pool'] | undefined;
  private listenDown: () => boolean = () => false;

  constructor(readonly enabled: boolean) {
    if (!enabled) return;
    const families = createFamilies(this.registry, {
      sessionsNeedingReauthentication: () => this.sessionsNeedingReauthentication.read(),
      approvalsPending: () => this.approvalsPending.read(),
      approvalWaiters: () => this.waiterSources.reduce((sum, held) => sum + held(), 0),
      keySetAges: (set) => keySetAges(this.keySets, set),
      pool: () => this.pool?.(),
      listenDown: () => this.listenDown(),
    });
    this.on = { families, children: buildChildren(families) };
  }

  /** The text a scrape answers. The one place `/metrics` reads (with worker processes it aggregates them here). */
  async scrape(): Promise<Scrape> {
    // In a cluster worker the primary aggregates every worker's registry.
    if (inClusterWorker()) return { contentType: CLUSTER_METRICS_CONTENT_TYPE, body: await scrapeCluster() };
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** The request histogram of one server, for both entrances (the Nest pipeline and the hot routes). */
  httpServer(server: ServerLabel): HttpServerMetrics {
    return this.on === undefined
      ? NO_HTTP_SERVER_METRICS
      : new HistogramHttpServerMetrics(this.on.families.httpRequestDuration, server);
  }

  /**
   * One `POST /oauth2/token` answer: `grantType` as the client sent it (unknown: `other`),
   * `outcome` `ok` or the OAuth error code; a token exchange's duration is observed too.
   */
  tokenRequest(grantType: string | undefined, outcome: string, seconds: number): void {
    if (this.on === undefined) return;
    const grant = grantTypeLabel(grantType);
    const label = tokenOutcomeLabel(outcome);
    this.on.children.tokenRequests[grant][label].inc();
    if (grant === 'token_exchange') this.on.children.tokenExchangeDuration[label].observe(seconds);
  }

  /**
   * A token exchange or impersonation request refused before its client assertion
   * authenticated anyone, by its OAuth error code: counted here instead of a ledger event
   * (docs/events.md), so a flood of them costs an add, not a row.
   */
  unauthenticatedTokenRequest(grant: UnauthenticatedGrant, code: string): void {
    this.on?.children.tokenRequestsUnauthenticated[grant][refusalLabel(code)].inc();
  }

  /** An authenticated revocation (RFC 7009), by what it ended. */
  tokenRevocation(tokenType: RevokedTokenType): void {
    this.on?.children.revocations[tokenType].inc();
  }

  /** An introspection answer (RFC 7662), by `active`. */
  tokenIntrospection(active: boolean): void {
    this.on?.children.introspections[active ? 'true' : 'false'].inc();
  }

  /** An impersonation decision: issued (`allowed`), refused (`denied`), or failed (`error`: server_error). */
  impersonationDecision(outcome: ImpersonationOutcome): void {
    this.on?.children.impersonation[outcome].inc();
  }

  /** A third-party refresh that reached the provider, with its round trip. */
  vaultRefresh(outcome: RefreshOutcome, trigger: RefreshTrigger, seconds: number): void {
    if (this.on === undefined) return;
    this.on.children.vaultRefreshes[outcome][trigger].inc();
    this.on.children.vaultRefreshDuration[trigger].observe(seconds);
  }

  /** A provider token endpoint gave no usable answer. */
  providerHttpError(kind: ProviderErrorKind): void {
    this.on?.children.providerErrors[kind].inc();
  }

  /** One cache lookup. */
  cacheLookup(cache: CacheName, hit: boolean): void {
    if (this.on === undefined) return;
    (hit ? this.on.children.cacheHits : this.on.children.cacheMisses)[cache].inc();
  }

  /** The fetch reporting of one remote key set instance, by role (several instances may share a name). */
  keySet(name: KeySetName): KeySetMetrics {
    if (this.on === undefined) return NO_KEY_SET_METRICS;
    const tracker = new KeySetTracker(name, zeroed(this.on.families.keySetFetchFailures.labels(name)));
    this.keySets.push(tracker);
    return tracker;
  }

  /** A long-poll hub's held waiters, read at scrape time (summed over the process's hubs). */
  watchApprovalWaiters(held: () => number): void {
    if (this.on !== undefined) this.waiterSources.push(held);
  }

  /** Long-polls woken by a change. */
  approvalWakeups(count: number): void {
    this.on?.families.approvalWakeups.inc(count);
  }

  /** The database reads behind the gauges (called once at boot by the database's owner). */
  setDatabaseReaders(readers: DatabaseReaders): void {
    if (this.on === undefined) return;
    this.sessionsNeedingReauthentication.setReader(readers.sessionsNeedingReauthentication);
    this.approvalsPending.setReader(readers.approvalsPending);
    this.pool = readers.pool;
  }

  /** The process's LISTEN connection state, read at scrape time (called once at boot on PostgreSQL). */
  watchListenConnection(down: () => boolean): void {
    if (this.on !== undefined) this.listenDown = down;
  }

  /** The LISTEN connection went down (once per outage, however many reconnects fail). */
  listenConnectionDown(): void {
    this.on?.families.listenOutages.inc();
  }

  /** How long a PGlite query waited for the one connection. */
  pgliteWait(seconds: number): void {
    this.on?.families.pgliteWait.observe(seconds);
  }

  /** hot-path ledger events written by the queue's flusher. */
  eventsWritten(count: number): void {
    this.on?.families.eventsWritten.inc(count);
  }

  /** hot-path ledger events dropped on queue overflow, refusals first (never a token exchange blocked or failed instead). */
  eventsDropped(count: number): void {
    this.on?.families.eventsDropped.inc(count);
  }
}
