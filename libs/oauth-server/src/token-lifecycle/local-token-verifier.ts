import { ASYMMETRIC_ALGORITHMS, Clock } from '@broker/domain';
import { BrokerMetrics } from '@broker/telemetry';
import { Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import {
  candidateKeys,
  checkedClaims,
  decodeJws,
  importVerificationKeys,
  signatureValid,
  type VerificationKey,
} from '../jwt/compact-jws';
import { VerifiedJwtCache } from '../jwt/verified-jwt-cache';
import type { JsonWebKeySet } from '../signing-keys/signing-key.service';
import { SigningKeyService } from '../signing-keys/signing-key.service';
import { AccessTokenIssuer } from '../token/access-token-issuer';

/** RFC 9068 §4: our access tokens are explicitly typed; another JWT signed with our keys is not one. */
const ACCESS_TOKEN_TYPE = 'at+jwt';
const PURPOSE = 'local_access_token';

/**
 * Verifies the broker's own access tokens for revocation and introspection: a compact JWS
 * of `typ: at+jwt`, signed by one of the broker's live signing keys (the key set the JWKS
 * publishes, imported once per change), issued by the broker, `exp` in the future and no
 * `nbf` ahead (no leeway: a token is active only within its own lifetime, RFC 7662 §2.2).
 * Verified claims are remembered by the SHA-256 of the token (`VerifiedJwtCache`, admitted on
 * second sight, forgotten at `exp` and whenever the key set changes), so a token
 * introspected again costs a hash, not a signature check. Undefined for anything else.
 */
@Injectable()
export class LocalTokenVerifier {
  private readonly verified: VerifiedJwtCache;
  private source: JsonWebKeySet | undefined;
  private content = '';
  private keys: readonly VerificationKey[] = [];

  constructor(
    private readonly signingKeys: SigningKeyService,
    private readonly issuer: AccessTokenIssuer,
    private readonly clock: Clock,
    metrics: BrokerMetrics,
  ) {
    this.verified = new VerifiedJwtCache(undefined, metrics);
  }

  async verify(jwt: string): Promise<JWTPayload | undefined> {
    const keys = this.current(await this.signingKeys.jwks());
    const nowMs = this.clock.nowMs();
    const key = VerifiedJwtCache.key(PURPOSE, jwt);
    const cached = this.verified.get(key, nowMs);
    if (cached !== undefined) return withinLifetime(cached, nowMs) ? cached : undefined;
    const payload = this.fullyVerified(jwt, keys, nowMs);
    if (payload === undefined || !withinLifetime(payload, nowMs)) return undefined;
    this.verified.set(key, payload, nowMs);
    return payload;
  }

  private fullyVerified(jwt: string, keys: readonly VerificationKey[], nowMs: number): JWTPayload | undefined {
    try {
      const jws = decodeJws(jwt, ASYMMETRIC_ALGORITHMS);
      if (jws.header.typ !== ACCESS_TOKEN_TYPE) return undefined;
      if (!candidateKeys(keys, jws.alg, jws.header.kid).some((candidate) => signatureValid(jws, candidate.key)))
        return undefined;
      return checkedClaims(jws, { issuer: this.issuer.issuer, toleranceSeconds: 0, nowMs });
    } catch {
      return undefined;
    }
  }

  /** The live keys, imported again only when the published set's content changed (then every remembered verification goes). */
  private current(jwks: JsonWebKeySet): readonly VerificationKey[] {
    if (jwks === this.source) return this.keys;
    const content = JSON.stringify(jwks.keys);
    this.source = jwks;
    if (content !== this.content) {
      this.content = content;
      this.keys = importVerificationKeys(jwks.keys);
      this.verified.clear();
    }
    return this.keys;
  }
}

/** `exp` in the future and `nbf` (when present) not ahead, by the clock, without leeway. */
function withinLifetime(payload: JWTPayload, nowMs: number): boolean {
  if (typeof payload.exp !== 'number' || payload.exp * 1000 <= nowMs) return false;
  return typeof payload.nbf !== 'number' || payload.nbf * 1000 <= nowMs;
}
