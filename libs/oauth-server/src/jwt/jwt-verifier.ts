import type { Clock } from '@broker/domain';
import type { BrokerMetrics } from '@broker/telemetry';
import type { JWTHeaderParameters, JWTPayload } from 'jose';
import { checkedClaims, decodeJws, JwsRefused, signatureValid } from './compact-jws';
import type { RemoteKeySet } from './remote-key-set';
import { VerifiedJwtCache } from './verified-jwt-cache';

/**
 * Asymmetric algorithms only: never `none`, never HMAC (a public key must not become a shared
 * secret). The list lives in libs/domain, where the configuration schema reads it too.
 */
export { ASYMMETRIC_ALGORITHMS } from '@broker/domain';

/** Leeway for `exp`, `nbf` and `iat`: 60 s. */
export const CLOCK_TOLERANCE_SECONDS = 60;

/** Why a JWT was not accepted (never the token itself). */
export class JwtRejected extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'JwtRejected';
  }
}

export interface VerifyOptions {
  /** What the token is verified as; results are cached per purpose (never reused for another). */
  readonly purpose: string;
  /** Accepted audiences; undefined: the audience is not checked. */
  readonly audience?: readonly string[];
  readonly algorithms: readonly string[];
  /**
   * Rules of the purpose over the verified header and claims (RFC 8725 §3.11 explicit
   * typing, lifetime bounds): a refusal reason, or undefined to accept. They run on a full
   * verification only, never on a cache hit, so a rule may depend on the token and on time
   * only in a way that stays true once true (the clock moves forward).
   */
  readonly accepts?: (header: JWTHeaderParameters, payload: JWTPayload, nowMs: number) => string | undefined;
}

/**
 * Verifies JWTs of one trusted issuer: signature by its cached key set (`RemoteKeySet`)
 * with an algorithm of the allow-list (node:crypto, `compact-jws.ts`), `iss`, `aud` when asked, `exp` (required), `nbf` and
 * `iat` (60 s leeway each), then the purpose's own rules (`accepts`). Results are
 * remembered by the hash of the token bytes until the token's `exp` (`VerifiedJwtCache`)
 * and forgotten when the key set changes, so a reused token costs one hash, not a
 * signature check. Claims returned are frozen and shared: never mutate them.
 */
export class JwtVerifier {
  private readonly verified: VerifiedJwtCache;

  constructor(
    readonly issuer: string,
    private readonly keys: RemoteKeySet,
    private readonly clock: Clock,
    metrics?: BrokerMetrics,
  ) {
    this.verified = new VerifiedJwtCache(undefined, metrics);
    keys.onChange(() => this.verified.clear());
  }

  async verify(jwt: string, options: VerifyOptions): Promise<JWTPayload> {
    const key = VerifiedJwtCache.key(options.purpose, jwt);
    const cached = this.verified.get(key, this.clock.nowMs());
    if (cached !== undefined) {
      this.keys.maintain();
      return cached;
    }
    const generation = this.keys.generation;
    let payload: JWTPayload;
    let header: JWTHeaderParameters;
    try {
      const jws = decodeJws(jwt, options.algorithms);
      const keys = await this.keys.keysFor(jws.alg, jws.header.kid);
      if (keys.length === 0) throw new JwsRefused('no matching key');
      if (!keys.some((candidate) => signatureValid(jws, candidate.key))) throw new JwsRefused('signature invalid');
      payload = checkedClaims(jws, {
        issuer: this.issuer,
        audience: options.audience,
        toleranceSeconds: CLOCK_TOLERANCE_SECONDS,
        nowMs: this.clock.nowMs(),
      });
      header = jws.header;
    } catch (error) {
      throw new JwtRejected(error instanceof JwsRefused ? error.code : 'invalid token');
    }
    const nowMs = this.clock.nowMs();
    if (payload.iat !== undefined && payload.iat > nowMs / 1000 + CLOCK_TOLERANCE_SECONDS)
      throw new JwtRejected('issued in the future');
    const refusal = options.accepts?.(header, payload, nowMs);
    if (refusal !== undefined) throw new JwtRejected(refusal);
    // Verified against keys that were replaced meanwhile: answer this once, remember nothing
    // (generation 0 is the first load, made by this very verification).
    if (generation === 0 || generation === this.keys.generation) this.verified.set(key, payload, nowMs);
    return payload;
  }
}
