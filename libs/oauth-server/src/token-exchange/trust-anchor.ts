import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

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

/**
 * The gateway's trust anchor (`token_exchange.client_assertion`): issuer, JWKS and accepted
 * audiences (default the broker's issuer). The key set is fetched once and cached by jose
 * (refetched at most every 30 s on an unknown `kid`, at most every 10 minutes otherwise),
 * never per request.
 */
@Injectable()
export class TrustAnchor {
  private readonly keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  private readonly issuer: string | undefined;
  private readonly audiences: string[];

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clock: Clock,
  ) {
    const anchor = config.token_exchange.client_assertion;
    this.issuer = anchor.issuer_uri;
    this.keys = anchor.jwks_uri === undefined ? undefined : createRemoteJWKSet(new URL(anchor.jwks_uri), { cooldownDuration: 30_000, cacheMaxAge: 600_000, timeoutDuration: 5_000 });
    this.audiences = anchor.audience !== undefined ? [...anchor.audience] : [config.oauth2_authorization_server.local.issuer_uri ?? config.server.enduser.public_url];
  }

  /** Verifies signature, issuer, expiry and not-before; the audience too unless `checkAudience` is false. */
  async verify(jwt: string, checkAudience: boolean): Promise<JWTPayload> {
    if (this.keys === undefined || this.issuer === undefined) throw new JwtRejected('no trust anchor is configured');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(jwt, this.keys, {
        issuer: this.issuer,
        audience: checkAudience ? this.audiences : undefined,
        algorithms: ASYMMETRIC_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: this.clock.now(),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw new JwtRejected((error as { code?: string }).code ?? 'invalid token');
    }
    if (payload.iat !== undefined && payload.iat > this.clock.nowMs() / 1000 + CLOCK_TOLERANCE_SECONDS) throw new JwtRejected('issued in the future');
    return payload;
  }
}
