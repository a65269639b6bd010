import { createHash } from 'node:crypto';
import type { BrokerMetrics } from '@broker/telemetry';
import type { JWTPayload } from 'jose';

/** Entries held at most (≈1 KB each: a 43-byte key and the decoded claims). */
export const VERIFIED_JWT_CACHE_ENTRIES = 10_000;

interface Entry {
  readonly payload: JWTPayload;
  readonly expiresAtMs: number;
}

/**
 * Bounded cache of JWTs that passed verification, so a gateway's reused assertion and a
 * user's reused token are verified once, not on every call. Keyed by the SHA-256 of the
 * exact token bytes and the purpose it was verified for (an assertion checked against our
 * audience is a different fact from a subject token checked without one); the token itself
 * is never kept. An entry expires no later than the token's `exp` (without the leeway the
 * verification allowed) and the owner clears everything when the trusted keys change.
 * When full, the oldest entry is evicted (insertion order: no bookkeeping on hits).
 *
 * Admission on second sight: a token is only stored the second time it is verified (a
 * bounded set of recently seen hashes remembers the first). Tokens used once (a gateway
 * minting a fresh assertion per call) then cost no cache churn and no long-lived decoded
 * claims for the garbage collector to promote; reused tokens pay one extra verification.
 */
export class VerifiedJwtCache {
  private readonly entries = new Map<string, Entry>();
  private readonly seenOnce = new Set<string>();

  constructor(
    private readonly capacity = VERIFIED_JWT_CACHE_ENTRIES,
    /** `broker_cache_requests_total{cache="verified_jwt"}` when given. */
    private readonly metrics?: BrokerMetrics,
  ) {}

  static key(purpose: string, jwt: string): string {
    return `${purpose}:${createHash('sha256').update(jwt).digest('base64url')}`;
  }

  get(key: string, nowMs: number): JWTPayload | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined && nowMs >= entry.expiresAtMs) this.entries.delete(key);
    const hit = entry !== undefined && nowMs < entry.expiresAtMs;
    this.metrics?.cacheLookup('verified_jwt', hit);
    return hit ? entry.payload : undefined;
  }

  /** Stores a verified payload (frozen: callers share it); tokens without `exp` are not cached. */
  set(key: string, payload: JWTPayload, nowMs: number): void {
    if (typeof payload.exp !== 'number' || payload.exp * 1000 <= nowMs || this.capacity <= 0) return;
    if (!this.seenOnce.delete(key)) {
      if (this.seenOnce.size >= this.capacity) this.seenOnce.clear();
      this.seenOnce.add(key);
      return;
    }
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { payload: Object.freeze(payload), expiresAtMs: payload.exp * 1000 });
  }

  clear(): void {
    this.entries.clear();
    this.seenOnce.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
