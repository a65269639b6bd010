import type { BrokerMetrics } from '@broker/telemetry';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { EXCHANGE_CHANNEL } from './exchange-context-cache';

/**
 * The channel of committed token revocations (migration TokenRevocation): `jti:<uuid>` when
 * an access token was revoked, `family:<uuid>` when a refresh token family was.
 */
export const TOKEN_REVOKED_CHANNEL = 'token_revoked';

/** At most this many access tokens' facts are kept; the oldest goes first. */
export const TOKEN_STATE_ENTRIES = 100_000;
/**
 * A backstop, not the mechanism: an entry is read again from the database after this long
 * even if no notification said it changed (a row written with triggers disabled by hand).
 */
export const TOKEN_STATE_TTL_MS = 60_000;

/** Which access token the facts are about: its `jti`, `sid`, person (a delegated token) and agent. */
export interface AccessTokenKey {
  readonly jti: string;
  readonly familyId: string | undefined;
  /** Set for a person's delegated token: the grant of (principal, agent) is read. */
  readonly principal: string | undefined;
  readonly agentId: string;
}

/** The grant of a (principal, agent), as introspection judges it (active, and not granted again after the token). */
export interface GrantFacts {
  readonly validUntil: Date | null;
  readonly createdAt: Date;
}

/** What the database says about an access token besides its signature and claims. */
export interface AccessTokenFacts {
  /** Its `jti` is in `revoked_access_tokens`. */
  readonly revoked: boolean;
  /** Its `sid` names a refresh token family or an enterprise authorization that was revoked. */
  readonly familyRevoked: boolean;
  /** Its `sid` names an enterprise authorization (docs/oauth2.md "Enterprise-managed authorization"): no consent grant is behind it. */
  readonly enterprise: boolean;
  /** The grant of (principal, agent) when a principal was asked about; undefined: none. */
  readonly grant: GrantFacts | undefined;
}

interface Entry {
  readonly key: AccessTokenKey;
  readonly facts: AccessTokenFacts;
  readonly expiresAtMs: number;
}

/**
 * What introspection reads from the database for an access token (revoked `jti`, revoked
 * `sid` family, the person's grant), kept in memory on PostgreSQL so that a token
 * introspected again costs no round trip (docs/oauth2.md "Token lifecycle").
 *
 * It serves only while this process listens on both `token_revoked` and `exchange_changed`:
 * every committed revocation notifies its `jti` or family, every grant change its person,
 * and each replica drops the matching entries when the notification arrives; the replica
 * that wrote drops them at commit (`forgetJti`, `forgetFamily`, `forgetPrincipal`). While
 * the notification connection is down (closed, or open but its heartbeat not back: see
 * `PostgresListenConnection`) nothing is served from memory and everything read before is
 * dropped. A read that overlapped an invalidation is not stored (generation
 * check). The grant's `valid_until` and `created_at` are judged by the caller on every
 * hit, with its clock. On PGlite (one process, no LISTEN) there is no cache: `listen` is
 * undefined and every read goes to the database.
 */
export class TokenStateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byFamily = new Map<string, Set<string>>();
  private readonly byPrincipal = new Map<string, Set<string>>();
  private generation = 0;
  private serving = false;
  private started = false;
  /** Counts hits and misses when set (`Database.instrument`). */
  metrics: BrokerMetrics | undefined;

  constructor(private readonly listen: PostgresListenConnection | undefined) {}

  /** Whether reads are answered from memory now (the notification connection listens on both channels). */
  get active(): boolean {
    return this.serving;
  }

  /** The facts for the token, from memory or from `load` (then kept). The first call starts listening. */
  async read(key: AccessTokenKey, nowMs: number, load: () => Promise<AccessTokenFacts>): Promise<AccessTokenFacts> {
    if (!this.started) this.start();
    if (!this.serving) return load();
    const hit = this.entries.get(key.jti);
    if (hit !== undefined && sameKey(hit.key, key)) {
      if (hit.expiresAtMs > nowMs) {
        this.metrics?.cacheLookup('token_state', true);
        return hit.facts;
      }
    }
    if (hit !== undefined) this.drop(key.jti);
    this.metrics?.cacheLookup('token_state', false);
    const generation = this.generation;
    const facts = await load();
    if (this.serving && generation === this.generation)
      this.store({ key, facts, expiresAtMs: nowMs + TOKEN_STATE_TTL_MS });
    return facts;
  }

  /** An access token was revoked (here or, by notification, elsewhere). */
  forgetJti(jti: string): void {
    this.generation += 1;
    this.drop(jti);
  }

  /** A refresh token family was revoked: the access tokens carrying it as `sid`. */
  forgetFamily(familyId: string): void {
    this.generation += 1;
    for (const jti of [...(this.byFamily.get(familyId) ?? [])]) this.drop(jti);
  }

  /** The person's grants changed (`exchange_changed`), or anything did (undefined or empty). */
  forgetPrincipal(principal: string | undefined): void {
    this.generation += 1;
    if (principal === undefined || principal === '') {
      this.clear();
      return;
    }
    for (const jti of [...(this.byPrincipal.get(principal) ?? [])]) this.drop(jti);
  }

  /** A `token_revoked` notification's payload. */
  notified(payload: string | undefined): void {
    if (payload?.startsWith('jti:') === true) this.forgetJti(payload.slice(4));
    else if (payload?.startsWith('family:') === true) this.forgetFamily(payload.slice(7));
    else this.forgetPrincipal(undefined);
  }

  get size(): number {
    return this.entries.size;
  }

  private store(entry: Entry): void {
    const { jti, familyId, principal } = entry.key;
    this.drop(jti);
    if (this.entries.size >= TOKEN_STATE_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.drop(oldest.value);
    }
    this.entries.set(jti, entry);
    if (familyId !== undefined) index(this.byFamily, familyId, jti);
    if (principal !== undefined) index(this.byPrincipal, principal, jti);
  }

  private drop(jti: string): void {
    const entry = this.entries.get(jti);
    if (entry === undefined) return;
    this.entries.delete(jti);
    if (entry.key.familyId !== undefined) unindex(this.byFamily, entry.key.familyId, jti);
    if (entry.key.principal !== undefined) unindex(this.byPrincipal, entry.key.principal, jti);
  }

  private clear(): void {
    this.entries.clear();
    this.byFamily.clear();
    this.byPrincipal.clear();
  }

  private start(): void {
    this.started = true;
    const listen = this.listen;
    if (listen === undefined) return;
    const listening = (): boolean => listen.isListening(TOKEN_REVOKED_CHANNEL) && listen.isListening(EXCHANGE_CHANNEL);
    const resume = (): void => {
      this.forgetPrincipal(undefined);
      this.serving = listening();
    };
    const suspend = (): void => {
      this.serving = false;
      this.forgetPrincipal(undefined);
    };
    // Notifications sent while the connection was down are lost: start again from empty.
    const revoked = listen.subscribe(TOKEN_REVOKED_CHANNEL, {
      notify: (payload) => this.notified(payload),
      resync: resume,
      lost: suspend,
    });
    const grants = listen.subscribe(EXCHANGE_CHANNEL, {
      notify: (payload) => this.forgetPrincipal(payload),
      resync: resume,
      lost: suspend,
    });
    // Once both LISTENs have run: anything read before may have missed a change, so start empty.
    void Promise.all([revoked, grants]).then(resume, suspend);
  }
}

function sameKey(a: AccessTokenKey, b: AccessTokenKey): boolean {
  return a.familyId === b.familyId && a.principal === b.principal && a.agentId === b.agentId;
}

function index(map: Map<string, Set<string>>, key: string, jti: string): void {
  let set = map.get(key);
  if (set === undefined) {
    set = new Set();
    map.set(key, set);
  }
  set.add(jti);
}

function unindex(map: Map<string, Set<string>>, key: string, jti: string): void {
  const set = map.get(key);
  set?.delete(jti);
  if (set?.size === 0) map.delete(key);
}
