import { type Clock } from '@broker/domain';
import { OutboundHttp } from '@broker/outbound';
import { NO_KEY_SET_METRICS, type KeySetMetrics } from '@broker/telemetry';
import { Logger } from '@nestjs/common';
import type { AsymmetricAlgorithm } from '@broker/domain';
import type { JSONWebKeySet } from 'jose';
import { candidateKeys, importVerificationKeys, type VerificationKey } from './compact-jws';

/** Refresh policy of a trusted issuer's key set. */
export interface RemoteKeySetPolicy {
  /** Keys are used from cache this long before a refetch is due. */
  readonly maxAgeMs: number;
  /** Fetch attempts are at least this far apart (an unknown `kid` triggers at most one per interval). */
  readonly minIntervalMs: number;
  /** Total timeout of one fetch. */
  readonly timeoutMs: number;
}

export const TRUSTED_KEYS_POLICY: RemoteKeySetPolicy = {
  maxAgeMs: 10 * 60_000,
  minIntervalMs: 30_000,
  timeoutMs: 5_000,
};

/** A key set answer is a few KiB; 1 MiB is far beyond any real one. Connecting takes at most 3 s (or the total timeout). */
const KEY_SET_MAX_BYTES = 1024 * 1024;
const KEY_SET_CONNECT_TIMEOUT_MS = 3_000;

/**
 * A remote JWK set (a trusted issuer's, or the upstream authorization server's), fetched
 * and imported once and never per request. It is refetched when older than `maxAgeMs` (in
 * the background when a caller only `maintain`s it) and when a token names an unknown
 * `kid`, at most once per `minIntervalMs`, one fetch at a time; a failed fetch keeps
 * serving the last good keys (and is logged once per outage). Every change of content bumps
 * `generation` and tells the listeners (the verified-JWT caches flush then), so a removed
 * key stops verifying anything at once.
 */
export class RemoteKeySet {
  private readonly logger = new Logger(RemoteKeySet.name);
  /** The set's public keys, imported when the set was fetched (undefined until a fetch succeeded). */
  private keys: readonly VerificationKey[] | undefined;
  private document: JSONWebKeySet | undefined;
  private failing = false;
  private content = '';
  private fetchedAtMs = Number.NEGATIVE_INFINITY;
  private lastAttemptMs = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;
  private readonly listeners: (() => void)[] = [];
  private readonly http: OutboundHttp;
  /** Bumped whenever the fetched key set differs from the previous one. */
  generation = 0;

  constructor(
    private readonly uri: string,
    private readonly clock: Clock,
    private readonly policy: RemoteKeySetPolicy = TRUSTED_KEYS_POLICY,
    /** Fetch failures and the last success, under the key set's role (never its URL). */
    private readonly metrics: KeySetMetrics = NO_KEY_SET_METRICS,
  ) {
    // The issuer's URL is configuration, not outside input: no address guard. Redirects refused.
    this.http = new OutboundHttp({
      connectTimeoutMs: Math.min(policy.timeoutMs, KEY_SET_CONNECT_TIMEOUT_MS),
      totalTimeoutMs: policy.timeoutMs,
      maxResponseBytes: KEY_SET_MAX_BYTES,
      redirects: 'refuse',
    });
  }

  /** Called after every change of the key set. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * The keys that may verify a JWS with `alg` and `kid` (none: refused), from the set
   * imported at its last fetch; a stale set is refetched first, and a `kid` none of the keys
   * has causes one refetch per interval (the issuer may have rotated).
   */
  async keysFor(alg: AsymmetricAlgorithm, kid: unknown): Promise<readonly VerificationKey[]> {
    if (this.keys === undefined || this.isStale()) await this.refresh();
    if (this.keys === undefined) return [];
    const found = candidateKeys(this.keys, alg, kid);
    if (found.length > 0 || !this.mayFetch()) return found;
    await this.refresh();
    return candidateKeys(this.keys, alg, kid);
  }

  /**
   * The last good document (the same object until its content changes), refetched first
   * when stale; undefined while none could ever be fetched.
   */
  async current(): Promise<JSONWebKeySet | undefined> {
    if (this.document === undefined || this.isStale()) await this.refresh();
    return this.document;
  }

  /** False while the last fetch failed or none succeeded yet (health). */
  get healthy(): boolean {
    return !this.failing && this.document !== undefined;
  }

  /** Starts a background refetch when the keys are stale (callers that verified nothing, e.g. cache hits). */
  maintain(): void {
    if (this.isStale() && this.inFlight === undefined && this.mayFetch()) void this.refresh();
  }

  private isStale(): boolean {
    return this.clock.nowMs() - this.fetchedAtMs >= this.policy.maxAgeMs;
  }

  private mayFetch(): boolean {
    return this.clock.nowMs() - this.lastAttemptMs >= this.policy.minIntervalMs;
  }

  /** One fetch at a time; concurrent callers share it. Attempts inside the interval are no-ops. */
  private refresh(): Promise<void> {
    if (this.inFlight !== undefined) return this.inFlight;
    if (!this.mayFetch()) return Promise.resolve();
    this.inFlight = this.fetch().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async fetch(): Promise<void> {
    this.lastAttemptMs = this.clock.nowMs();
    try {
      const { json: document } = await this.http.getJson(this.uri);
      if (!Array.isArray(document.keys)) throw new Error('the document has no keys array');
      const content = JSON.stringify(document.keys);
      this.fetchedAtMs = this.clock.nowMs();
      this.metrics.fetchSucceeded();
      if (this.failing) this.logger.log(`key set available again at ${this.uri}`);
      this.failing = false;
      if (content === this.content && this.keys !== undefined) return;
      this.document = document as unknown as JSONWebKeySet;
      this.keys = importVerificationKeys(document.keys as unknown[]);
      const changed = this.content !== '';
      this.content = content;
      this.generation += 1;
      if (changed) this.logger.log(`key set changed at ${this.uri}`);
      for (const listener of this.listeners) listener();
    } catch (error) {
      this.metrics.fetchFailed();
      if (!this.failing) this.logger.warn(`key set fetch failed at ${this.uri}: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}
