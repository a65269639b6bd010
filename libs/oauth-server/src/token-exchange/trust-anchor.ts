import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { ASYMMETRIC_ALGORITHMS, JwtRejected, JwtVerifier } from '../jwt/jwt-verifier';
import { RemoteKeySet } from '../jwt/remote-key-set';

/** What a JWT is verified as: the gateway's assertion (audience checked) or a user's subject token. */
export type AnchorPurpose = 'client_assertion' | 'subject_token';

/**
 * The gateway's trust anchor (`token_exchange.client_assertion`): issuer, JWKS and accepted
 * audiences (default the broker's issuer). Keys are fetched once and cached (refetched at
 * most every 30 s on an unknown `kid`, every 10 minutes otherwise), never per request, and
 * verified tokens are remembered until their `exp` (see `JwtVerifier`).
 */
@Injectable()
export class TrustAnchor {
  private readonly verifier: JwtVerifier | undefined;
  private readonly audiences: string[];

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, clock: Clock) {
    const anchor = config.token_exchange.client_assertion;
    if (anchor.issuer_uri !== undefined && anchor.jwks_uri !== undefined) this.verifier = new JwtVerifier(anchor.issuer_uri, new RemoteKeySet(anchor.jwks_uri, clock), clock);
    this.audiences = anchor.audience !== undefined ? [...anchor.audience] : [config.oauth2_authorization_server.local.issuer_uri ?? config.server.enduser.public_url];
  }

  /** Verifies a gateway credential; the audience only for a client assertion. */
  verify(jwt: string, purpose: AnchorPurpose): Promise<JWTPayload> {
    if (this.verifier === undefined) return Promise.reject(new JwtRejected('no trust anchor is configured'));
    return this.verifier.verify(jwt, { purpose, audience: purpose === 'client_assertion' ? this.audiences : undefined, algorithms: ASYMMETRIC_ALGORITHMS });
  }
}
