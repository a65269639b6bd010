import { BROKER_CONFIG, ConfigError, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { BrokerMetrics } from '@broker/telemetry';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { JWTHeaderParameters, JWTPayload } from 'jose';
import {
  ASYMMETRIC_ALGORITHMS,
  CLOCK_TOLERANCE_SECONDS,
  JwtRejected,
  JwtVerifier,
  type VerifyOptions,
} from '../jwt/jwt-verifier';
import { RemoteKeySet } from '../jwt/remote-key-set';

/** What a JWT is verified as: the gateway's client assertion or a user's subject token. */
export type AnchorPurpose = 'client_assertion' | 'subject_token';

/**
 * `typ` values a client assertion may carry: none, the generic `JWT`, or the explicit type
 * of draft-ietf-oauth-rfc7523bis. Any other type names another kind of token.
 */
const ASSERTION_TYPES: ReadonlySet<string> = new Set(['jwt', 'client-authentication+jwt']);
/** `typ` values a subject token (a user's access token) may carry: none, `JWT`, or RFC 9068's `at+jwt`. */
const SUBJECT_TYPES: ReadonlySet<string> = new Set(['jwt', 'at+jwt']);
/** Claims only an OpenID Connect ID token carries (OIDC Core §2, §3.3.2.11): never in a client assertion. */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash'] as const;

/** RFC 7515 §4.1.9: `typ` is a media type, compared case-insensitively, `application/` optional ('' when not a string). */
function mediaType(typ: unknown): string | undefined {
  if (typ === undefined) return undefined;
  if (typeof typ !== 'string') return '';
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

/** RFC 8725 §3.11: a token whose `typ` marks it as another kind (e.g. `at+jwt`) is not a client assertion. */
function assertAssertionTyped(header: JWTHeaderParameters): string | undefined {
  const typ = mediaType(header.typ);
  return typ === undefined || ASSERTION_TYPES.has(typ) ? undefined : 'typ is not that of a client assertion';
}

/** An ID token (for any client) is never a client assertion, whatever its `typ` says. */
function assertNotIdToken(payload: JWTPayload): string | undefined {
  return ID_TOKEN_CLAIMS.some((claim) => payload[claim] !== undefined) ? 'carries ID token claims' : undefined;
}

/** `token_exchange.client_assertion.max_lifetime`: `exp` no further ahead than this (plus the leeway). */
function assertLifetimeBounded(payload: JWTPayload, maxLifetimeMs: number, nowMs: number): string | undefined {
  return (payload.exp as number) * 1000 > nowMs + maxLifetimeMs + CLOCK_TOLERANCE_SECONDS * 1000
    ? 'expires further ahead than max_lifetime'
    : undefined;
}

/** RFC 8725 §3.11 for subject tokens: an access token, so any explicit type but `at+jwt` names something else. */
function assertSubjectTyped(header: JWTHeaderParameters): string | undefined {
  const typ = mediaType(header.typ);
  return typ === undefined || SUBJECT_TYPES.has(typ) ? undefined : 'typ is not that of an access token';
}

/**
 * The gateway's trust anchor (`token_exchange.client_assertion`): issuer, JWKS and accepted
 * audiences. A client assertion must be addressed to `client_assertion.audience` (default
 * the broker's issuer), a subject token to `subject_token.audience` (default the same list),
 * so a token the issuer signed for another application or API is neither. Assertions are
 * told apart from other JWTs by `typ` and ID-token claims, and optionally by a maximum
 * lifetime. The anchor may never be the broker's own issuer (start-up stops naming the
 * key), so an agent's access token can never pass as the gateway. Keys are fetched once and
 * cached (refetched at most every 30 s on an unknown `kid`, every 10 minutes otherwise),
 * never per request, and verified tokens are remembered until their `exp` (see
 * `JwtVerifier`); the rules above run on a full verification only.
 */
@Injectable()
export class TrustAnchor {
  private readonly verifier: JwtVerifier | undefined;
  private readonly options: Readonly<Record<AnchorPurpose, VerifyOptions>>;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, clock: Clock, @Optional() metrics?: BrokerMetrics) {
    const anchor = config.token_exchange.client_assertion;
    const brokerIssuer = config.oauth2_authorization_server.local.issuer_uri ?? config.server.enduser.public_url;
    if (anchor.issuer_uri === brokerIssuer) {
      throw new ConfigError(
        'token_exchange.client_assertion.issuer_uri',
        `is the broker's own issuer (${brokerIssuer}): the gateway's tokens must come from another issuer, or an agent's access token could pass as the gateway`,
      );
    }
    if (anchor.issuer_uri !== undefined && anchor.jwks_uri !== undefined)
      this.verifier = new JwtVerifier(
        anchor.issuer_uri,
        new RemoteKeySet(anchor.jwks_uri, clock, undefined, metrics?.keySet('trust_anchor')),
        clock,
        metrics,
      );
    const assertionAudiences = anchor.audience !== undefined ? [...anchor.audience] : [brokerIssuer];
    const maxLifetimeMs = anchor.max_lifetime;
    this.options = {
      client_assertion: {
        purpose: 'client_assertion',
        audience: assertionAudiences,
        algorithms: ASYMMETRIC_ALGORITHMS,
        accepts: (header, payload, nowMs) =>
          assertAssertionTyped(header) ??
          assertNotIdToken(payload) ??
          (maxLifetimeMs === undefined ? undefined : assertLifetimeBounded(payload, maxLifetimeMs, nowMs)),
      },
      subject_token: {
        purpose: 'subject_token',
        audience:
          config.token_exchange.subject_token.audience !== undefined
            ? [...config.token_exchange.subject_token.audience]
            : assertionAudiences,
        algorithms: ASYMMETRIC_ALGORITHMS,
        accepts: (header) => assertSubjectTyped(header),
      },
    };
  }

  /** Verifies a gateway credential for its purpose: signature, issuer, audience, time, then the purpose's rules. */
  verify(jwt: string, purpose: AnchorPurpose): Promise<JWTPayload> {
    if (this.verifier === undefined) return Promise.reject(new JwtRejected('no trust anchor is configured'));
    return this.verifier.verify(jwt, this.options[purpose]);
  }
}
