import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { jwtVerify, type JWTPayload } from 'jose';
import { RemoteKeySet } from '../jwt/remote-key-set';
import { VerifiedJwtCache } from '../jwt/verified-jwt-cache';

/** Asymmetric algorithms only: never `none`, never HMAC (a public key must not become a shared secret). */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Leeway for `exp`, `nbf` and `iat` (SPEC.md / issue: 60 s). */
export const CLOCK_TOLERANCE_SECONDS = 60;

/** Why a JWT was not accepted (never the token itself). */
export class JwtRejected extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'JwtRejected';
  }
}

/** What a JWT is verified as: the gateway's assertion (audience checked) or a user's subject token. */
export type AnchorPurpose = 'client_assertion' | 'subject_token';

/**
 * The gateway's trust anchor (`token_exchange.client_assertion`): issuer, JWKS and accepted
 * audiences (default the broker's issuer). The key set is fetched once and cached
 * (`RemoteKeySet`: refetched at most every 30 s on an unknown `kid`, every 10 minutes
 * otherwise), never per request. Verified tokens are remembered by the hash of their bytes
 * until their `exp` (`VerifiedJwtCache`), and forgotten when the key set changes, so a
 * gateway's reused assertion and a user's reused token cost one hash, not a signature check.
 */
@Injectable()
export class TrustAnchor {
  private readonly keys: RemoteKeySet | undefined;
  private readonly issuer: string | undefined;
  private readonly audiences: string[];
  private readonly verified = new VerifiedJwtCache();

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clock: Clock,
  ) {
    const anchor = config.token_exchange.client_assertion;
    this.issuer = anchor.issuer_uri;
    this.keys = anchor.jwks_uri === undefined ? undefined : new RemoteKeySet(anchor.jwks_uri, clock);
    this.keys?.onChange(() => this.verified.clear());
    this.audiences = anchor.audience !== undefined ? [...anchor.audience] : [config.oauth2_authorization_server.local.issuer_uri ?? config.server.enduser.public_url];
  }

  /**
   * Verifies signature (asymmetric allow-list), issuer, expiry, not-before and issued-at
   * (60 s leeway each); the audience too for a client assertion. The returned claims are
   * frozen and shared: never mutate them.
   */
  async verify(jwt: string, purpose: AnchorPurpose): Promise<JWTPayload> {
    if (this.keys === undefined || this.issuer === undefined) throw new JwtRejected('no trust anchor is configured');
    const key = VerifiedJwtCache.key(purpose, jwt);
    const cached = this.verified.get(key, this.clock.nowMs());
    if (cached !== undefined) {
      this.keys.maintain();
      return cached;
    }
    const generation = this.keys.generation;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, this.keys.getKey, {
        issuer: this.issuer,
        audience: purpose === 'client_assertion' ? this.audiences : undefined,
        algorithms: ASYMMETRIC_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: this.clock.now(),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw new JwtRejected((error as { code?: string }).code ?? 'invalid token');
    }
    const nowMs = this.clock.nowMs();
    if (payload.iat !== undefined && payload.iat > nowMs / 1000 + CLOCK_TOLERANCE_SECONDS) throw new JwtRejected('issued in the future');
    // Verified against keys that were replaced meanwhile: answer this once, remember nothing
    // (generation 0 is the first load, made by this very verification).
    if (generation === 0 || generation === this.keys.generation) this.verified.set(key, payload, nowMs);
    return payload;
  }
}
