import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, isHttpUrl, type CompiledExpression } from '@broker/domain';
import { metadataUrls, OutboundHttp } from '@broker/outbound';
import { BrokerMetrics } from '@broker/telemetry';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { JwtRejected, JwtVerifier } from '../jwt/jwt-verifier';
import { RemoteKeySet } from '../jwt/remote-key-set';
import { compileConfigExpression } from '../token/config-expression';

/** Issuer metadata: 3 s in all, 256 KiB at most, no redirects (RFC 8414 §3.3: its `issuer` must be the configured one). */
const DISCOVERY_TIMEOUT_MS = 3_000;
const DISCOVERY_MAX_BYTES = 256 * 1024;
/** A failed discovery is tried again after this long, not on every request. */
const DISCOVERY_RETRY_MS = 30_000;

/** One enterprise IdP whose Identity Assertion JWT Authorization Grants are accepted. */
export interface TrustedEnterpriseIssuer {
  readonly issuer: string;
  readonly algorithms: readonly string[];
  /** `principal_expression` over `id_jag` (the verified claims), compiled at boot. */
  readonly principalOf: CompiledExpression;
  /** The `tenant` claim required, when configured (draft-ietf-oauth-identity-assertion-authz-grant §3.1). */
  readonly tenant: string | undefined;
  /** Its verifier: at once for a configured `jwks_uri`, after the first discovery otherwise. */
  verifier(): Promise<JwtVerifier>;
}

/**
 * `oauth2_authorization_server.enterprise` (docs/oauth2.md "Enterprise-managed authorization"):
 * the trusted enterprise IdPs, by exact `iss`, each with its key set (`RemoteKeySet`, cached,
 * never fetched per request) and verified-token cache (`JwtVerifier`), built once. With
 * `discovery: true` the key set's location is read once from the issuer's metadata, on first
 * use, so the broker starts while the IdP is unreachable.
 */
@Injectable()
export class EnterpriseIssuers {
  private readonly issuers = new Map<string, TrustedEnterpriseIssuer>();
  /** Longest accepted `exp - iat` of an assertion, in seconds. */
  readonly maxLifetimeSeconds: number;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, clock: Clock, @Optional() metrics?: BrokerMetrics) {
    const section = config.oauth2_authorization_server.enterprise;
    this.maxLifetimeSeconds = Math.floor(section.max_assertion_lifetime / 1000);
    section.trusted_issuers.forEach((trusted, index) => {
      const principalOf = compileConfigExpression(
        `oauth2_authorization_server.enterprise.trusted_issuers[${index}].principal_expression`,
        trusted.principal_expression,
        ['id_jag'],
      );
      const build = (jwksUri: string): JwtVerifier =>
        new JwtVerifier(
          trusted.issuer_uri,
          new RemoteKeySet(jwksUri, clock, undefined, metrics?.keySet('enterprise_idp')),
          clock,
          metrics,
        );
      const verifier =
        trusted.jwks_uri === undefined
          ? discoveredVerifier(trusted.issuer_uri, clock, build)
          : (
              (fixed: JwtVerifier) => () =>
                Promise.resolve(fixed)
            )(build(trusted.jwks_uri));
      this.issuers.set(trusted.issuer_uri, {
        issuer: trusted.issuer_uri,
        algorithms: [...trusted.allowed_algorithms],
        principalOf,
        tenant: trusted.tenant,
        verifier,
      });
    });
  }

  /** Whether any issuer is trusted (the grant is offered only then). */
  get enabled(): boolean {
    return this.issuers.size > 0;
  }

  /** The trusted issuer named exactly `iss`; undefined for any other value. */
  find(iss: unknown): TrustedEnterpriseIssuer | undefined {
    return typeof iss === 'string' ? this.issuers.get(iss) : undefined;
  }
}

/**
 * The verifier of an issuer whose `jwks_uri` its metadata names (RFC 8414 §3, then OpenID
 * Connect Discovery): fetched once, concurrent first uses sharing the fetch; a failure is
 * remembered for `DISCOVERY_RETRY_MS` and refuses the assertions meanwhile.
 */
function discoveredVerifier(
  issuer: string,
  clock: Clock,
  build: (jwksUri: string) => JwtVerifier,
): () => Promise<JwtVerifier> {
  const logger = new Logger(EnterpriseIssuers.name);
  // Operator configuration, not outside input: no address guard (as remote key sets).
  const http = new OutboundHttp({
    connectTimeoutMs: DISCOVERY_TIMEOUT_MS,
    totalTimeoutMs: DISCOVERY_TIMEOUT_MS,
    maxResponseBytes: DISCOVERY_MAX_BYTES,
    redirects: 'refuse',
  });
  let found: JwtVerifier | undefined;
  let inFlight: Promise<JwtVerifier> | undefined;
  let failedAtMs = Number.NEGATIVE_INFINITY;
  const discover = async (): Promise<JwtVerifier> => {
    for (const url of metadataUrls(issuer)) {
      try {
        const { json } = await http.getJson(url);
        if (json.issuer !== issuer) {
          logger.warn(`enterprise issuer metadata at ${url} names another issuer`);
          continue;
        }
        if (typeof json.jwks_uri !== 'string' || !isHttpUrl(json.jwks_uri)) {
          logger.warn(`enterprise issuer metadata at ${url} has no http(s) jwks_uri`);
          continue;
        }
        return build(json.jwks_uri);
      } catch (error) {
        logger.warn(`enterprise issuer metadata at ${url} could not be read: ${(error as Error).message}`);
      }
    }
    throw new JwtRejected('the issuer metadata is unavailable');
  };
  return () => {
    if (found !== undefined) return Promise.resolve(found);
    if (clock.nowMs() - failedAtMs < DISCOVERY_RETRY_MS)
      return Promise.reject(new JwtRejected('the issuer metadata is unavailable'));
    inFlight ??= discover().then(
      (verifier) => {
        found = verifier;
        inFlight = undefined;
        return verifier;
      },
      (error: unknown) => {
        failedAtMs = clock.nowMs();
        inFlight = undefined;
        throw error;
      },
    );
    return inFlight;
  };
}
