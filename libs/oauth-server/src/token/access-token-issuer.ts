import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, OAuthError, Random, type Agent, type CompiledExpression } from '@broker/domain';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { signCompactJws } from '../signing-keys/key-material';
import { compileConfigExpression } from './config-expression';
import { SigningKeyService } from '../signing-keys/signing-key.service';

/**
 * A token response body of ours (RFC 6749 §5.1), what every local grant strategy returns; no
 * `data` envelope. Every member is named, so a grant builds it without casts.
 */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: string;
  readonly expires_in?: number;
  readonly scope?: string;
  /** Token exchange and impersonation (RFC 8693 §2.2.1). */
  readonly issued_token_type?: string;
  readonly refresh_token?: string;
  /** Token exchange: the services each delegated permission set covers. */
  readonly granted_permission_sets?: Readonly<Record<string, readonly string[]>>;
  /** The RFC 8707 resource granted, where the grant names it (an identity assertion's, draft-ietf-oauth-identity-assertion-authz-grant §4.4.1). */
  readonly resource?: string;
  /** RFC 9396 §7: what the token authorizes, where the request named it (a backchannel request's tool call). */
  readonly authorization_details?: readonly unknown[];
}

/** Who and what a locally issued access token is for. */
export interface AccessTokenSubject {
  readonly agent: Agent;
  /** The user the token acts for; null for client_credentials (then `sub` is the agent id). */
  readonly principal: string | null;
  readonly scopes: readonly string[];
  readonly grantType: string;
  /** Impersonation: the validated actor (RFC 8693 §4.1 `act`). */
  readonly act?: { readonly iss: string; readonly sub: string };
  /** Impersonation: the subject's email, when the rule binds it. */
  readonly email?: string;
  /** RFC 8707: the resources the token is for; its `aud` (a string for one), which the claims expression cannot change. */
  readonly resources?: readonly string[];
  /** The refresh token family the token came with (its `sid`): revoking the family ends the token (introspection). */
  readonly familyId?: string;
  /**
   * The Client ID Metadata Document URL the token is issued to (its `client_id_url`), when the
   * client is a metadata-document client of the agent: its tokens are that client's, not the
   * agent's own (revocation and introspection, `issuedToClient`).
   */
  readonly clientIdUrl?: string;
  /** RFC 9449 §6: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`, `token_type` DPoP). */
  readonly jkt?: string;
  /**
   * RFC 9396: the canonical JSON of the ONE approved `authorization_details` entry (`canonicalDetailJson`); the
   * token's `authorization_details` claim and the response's member are `[entry]`.
   */
  readonly authorizationDetails?: string;
  /** The token's lifetime in seconds when the grant has its own (a backchannel grant's `ciba.token_ttl`); else `local.token_ttl`. */
  readonly ttlSeconds?: number;
}

/** Claims the broker sets itself; the claims expression cannot override them. */
const RESERVED_CLAIMS = new Set([
  'iss',
  'sub',
  'iat',
  'exp',
  'nbf',
  'jti',
  'agent_id',
  'client_id',
  'client_id_url',
  'scope',
  'act',
  'sid',
  'cnf',
  'authorization_details',
]);

/** An `aud` value RFC 7519 §4.1.3 allows: a non-empty string, or a non-empty list of them. */
function isAudience(value: unknown): boolean {
  return (
    (typeof value === 'string' && value !== '') ||
    (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && item !== ''))
  );
}

/**
 * Signs the broker's own access tokens (JWT, RFC 9068 shape) with the current signing key,
 * imported once and cached by `SigningKeyService`: `iss`, `sub`, `aud`, `agent_id`,
 * `client_id`, `scope`, `iat`, `exp` (`local.token_ttl`), `jti`, plus the claims of
 * `local.token_claims_expression` (CEL over `agent`, `principal`, `request`, compiled at
 * boot; reserved claims stripped). `aud` (REQUIRED, RFC 9068 §2.2) is the requested resources
 * (RFC 8707) when there are any, whatever the expression says; otherwise the expression's
 * `aud`, when it yields one; otherwise the default resource indicator of RFC 9068 §3,
 * `local.default_audience` (default: the issuer). Every grant that issues a token of ours
 * (authorization code, refresh token, client credentials, the ID-JAG grant, impersonation)
 * comes here, so none leaves without an audience.
 */
@Injectable()
export class AccessTokenIssuer {
  readonly issuer: string;
  /** RFC 9068 §3: the `aud` of a token requested without `resource` whose claims expression names none. */
  readonly defaultAudience: string;
  /** `local.token_ttl` in seconds: every token's lifetime. */
  readonly ttlSeconds: number;
  private readonly claimsExpression: CompiledExpression | undefined;
  private readonly logger = new Logger(AccessTokenIssuer.name);

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly keys: SigningKeyService,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    this.issuer = config.oauth2_authorization_server.local.issuer_uri ?? config.server.enduser.public_url;
    this.defaultAudience = config.oauth2_authorization_server.local.default_audience ?? this.issuer;
    this.ttlSeconds = Math.floor(config.oauth2_authorization_server.local.token_ttl / 1000);
    const expression = config.oauth2_authorization_server.local.token_claims_expression;
    this.claimsExpression =
      expression === undefined
        ? undefined
        : compileConfigExpression('oauth2_authorization_server.local.token_claims_expression', expression, [
            'agent',
            'principal',
            'request',
          ]);
  }

  async issue(subject: AccessTokenSubject): Promise<TokenResponse> {
    const key = await this.keys.currentKey();
    if (key === undefined) throw new OAuthError('server_error', 'no signing key is available');
    const now = Math.floor(this.clock.nowMs() / 1000);
    const scope = subject.scopes.join(' ');
    const claims: Record<string, unknown> = {
      ...this.policyClaims(subject),
      agent_id: subject.agent.id,
      client_id: subject.agent.id,
    };
    if (scope) claims.scope = scope;
    if (subject.act !== undefined) claims.act = { iss: subject.act.iss, sub: subject.act.sub };
    if (subject.email !== undefined) claims.email = subject.email;
    if (subject.familyId !== undefined) claims.sid = subject.familyId;
    if (subject.clientIdUrl !== undefined) claims.client_id_url = subject.clientIdUrl;
    if (subject.jkt !== undefined) claims.cnf = { jkt: subject.jkt };
    // RFC 9396 §7, §9.1: exactly the approved entry, as stored (the claims expression cannot set it: reserved).
    const authorizationDetails =
      subject.authorizationDetails === undefined ? undefined : [JSON.parse(subject.authorizationDetails) as unknown];
    if (authorizationDetails !== undefined) claims.authorization_details = authorizationDetails;
    const ttlSeconds = subject.ttlSeconds ?? this.ttlSeconds;
    // The audience binding (RFC 8707, RFC 9068 §4) replaces any `aud` of the claims expression; without
    // a resource and an expression's `aud`, the default resource indicator (RFC 9068 §3): never none.
    const resources = subject.resources ?? [];
    if (resources.length > 0) claims.aud = resources.length === 1 ? resources[0] : [...resources];
    else if (!isAudience(claims.aud)) claims.aud = this.defaultAudience;
    // Registered claims last: the claims expression cannot override them (reserved anyway).
    const token = signCompactJws(
      { alg: key.algorithm, kid: key.kid, typ: 'at+jwt' },
      {
        ...claims,
        iss: this.issuer,
        sub: subject.principal ?? subject.agent.id,
        iat: now,
        exp: now + ttlSeconds,
        jti: this.random.uuid(),
      },
      key.privateKey,
      key.algorithm,
    );
    // RFC 9449 §5: a bound token's type is DPoP.
    const tokenType = subject.jkt === undefined ? 'Bearer' : 'DPoP';
    return {
      access_token: token,
      token_type: tokenType,
      expires_in: ttlSeconds,
      ...(scope ? { scope } : {}),
      ...(authorizationDetails === undefined ? {} : { authorization_details: authorizationDetails }),
    };
  }

  /** The claims expression's result, minus reserved claims; a failure is a server error. */
  private policyClaims(subject: AccessTokenSubject): Record<string, unknown> {
    if (this.claimsExpression === undefined) return {};
    const { agent } = subject;
    let result: unknown;
    try {
      result = this.claimsExpression({
        agent: {
          id: agent.id,
          display_name: agent.displayName,
          canonical_id: agent.canonicalId,
          client_id: agent.clientId,
          allowed_scopes: [...agent.allowedScopes],
        },
        principal: subject.principal,
        request: {
          grant_type: subject.grantType,
          scope: [...subject.scopes],
          client_id: agent.id,
          resource: [...(subject.resources ?? [])],
        },
      });
    } catch (error) {
      this.logger.error(`token_claims_expression failed: ${(error as Error).message.split('\n')[0] ?? ''}`);
      throw new OAuthError('server_error', 'token claims could not be computed');
    }
    if (result === null || typeof result !== 'object' || Array.isArray(result)) {
      this.logger.error('token_claims_expression must evaluate to a map of claims');
      throw new OAuthError('server_error', 'token claims could not be computed');
    }
    return Object.fromEntries(Object.entries(result).filter(([claim]) => !RESERVED_CLAIMS.has(claim)));
  }
}
