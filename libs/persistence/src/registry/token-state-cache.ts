import type { BrokerMetrics } from '@broker/telemetry';
import { DROP_ALL, NotifiedCache, type Invalidation } from '../cache/notified-cache';
import type { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { EXCHANGE_CHANNEL, principalChange } from './exchange-context-cache';

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

/** An entry: the facts, with the key they were read for (a hit must be for the same person, agent and family). */
interface Entry {
  readonly key: AccessTokenKey;
  readonly facts: AccessTokenFacts;
}

/**
 * What introspection reads from the database for an access token (revoked `jti`, revoked
 * `sid` family, the person's grant), kept in memory on PostgreSQL so that a token
 * introspected again costs no round trip (docs/oauth2.md "Token lifecycle"). A
 * `NotifiedCache` by `jti`, indexed by family and by person.
 *
 * It serves only while this process listens on both `token_revoked` and `exchange_changed`:
 * every committed revocation notifies its `jti` or family, every grant change its person,
 * and each replica drops the matching entries when the notification arrives; the replica
 * that wrote drops them at commit (`forgetJti`, `forgetFamily`, `forgetPrincipal`). While
 * the notification connection is down nothing is served from memory and everything read
 * before is dropped. The grant's `valid_until` and `created_at` are judged by the caller on
 * every hit, with its clock. On PGlite (one process, no LISTEN) there is no cache: `listen`
 * is undefined and every read goes to the database.
 */
export class TokenStateCache {
  private readonly cache: NotifiedCache<Entry, AccessTokenKey>;

  constructor(listen: PostgresListenConnection | undefined) {
    this.cache = new NotifiedCache<Entry, AccessTokenKey>({
      name: 'token_state',
      maxEntries: TOKEN_STATE_ENTRIES,
      ttlMs: TOKEN_STATE_TTL_MS,
      listen,
      serve: 'while-listening',
      channels: [
        { channel: TOKEN_REVOKED_CHANNEL, invalidates: revocation },
        { channel: EXCHANGE_CHANNEL, invalidates: principalChange },
      ],
      matches: (entry, key) => sameKey(entry.key, key),
      indexes: { family: (_, entry) => entry.key.familyId, principal: (_, entry) => entry.key.principal },
    });
  }

  /** Counts hits and misses when set (`Database.instrument`). */
  get metrics(): BrokerMetrics | undefined {
    return this.cache.metrics;
  }

  set metrics(metrics: BrokerMetrics | undefined) {
    this.cache.metrics = metrics;
  }

  /** Whether reads are answered from memory now (the notification connection listens on both channels). */
  get active(): boolean {
    return this.cache.active;
  }

  get size(): number {
    return this.cache.size;
  }

  /** The facts for the token, from memory or from `load` (then kept). The first call starts listening. */
  async read(key: AccessTokenKey, nowMs: number, load: () => Promise<AccessTokenFacts>): Promise<AccessTokenFacts> {
    const hit = this.cache.lookup(key.jti, nowMs, key);
    if (hit !== undefined) return hit.facts;
    // The loader always yields an entry: only its storing depends on the cache.
    const entry = (await this.cache.load(key.jti, nowMs, async () => ({ key, facts: await load() }))) as Entry;
    return entry.facts;
  }

  /** An access token was revoked (here or, by notification, elsewhere). */
  forgetJti(jti: string): void {
    this.cache.forgetKey(jti);
  }

  /** A refresh token family was revoked: the access tokens carrying it as `sid`. */
  forgetFamily(familyId: string): void {
    this.cache.forgetIndexed('family', familyId);
  }

  /** The person's grants changed (`exchange_changed`), or anything did (undefined or empty). */
  forgetPrincipal(principal: string | undefined): void {
    this.cache.invalidate(principalChange(principal));
  }

  /** A `token_revoked` notification's payload. */
  notified(payload: string | undefined): void {
    this.cache.invalidate(revocation(payload));
  }
}

/** `token_revoked`: `jti:<uuid>` or `family:<uuid>`; anything else drops everything. */
function revocation(payload: string | undefined): Invalidation {
  if (payload?.startsWith('jti:') === true) return { drop: 'key', key: payload.slice(4) };
  if (payload?.startsWith('family:') === true) return { drop: 'index', index: 'family', value: payload.slice(7) };
  return DROP_ALL;
}

function sameKey(a: AccessTokenKey, b: AccessTokenKey): boolean {
  return a.familyId === b.familyId && a.principal === b.principal && a.agentId === b.agentId;
}
