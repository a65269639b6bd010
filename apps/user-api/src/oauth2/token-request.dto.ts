import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ApiSchemaWith } from './open-schema';

/** RFC 8693 / RFC 7523 identifiers (as `libs/oauth-server` checks them). */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';

/** RFC 6749 §3.2: parameters the broker does not know are ignored, so no form is closed. */
const IGNORES_UNKNOWN = { additionalProperties: true } as const;

/**
 * How an agent with broker-issued credentials authenticates on a grant of its own (client credentials, JWT
 * bearer): its secret in the form (client_secret_post) or with HTTP Basic (client_secret_basic).
 */
abstract class AgentSecretForm {
  /** The agent's UUID (left out with HTTP Basic). */
  @ApiPropertyOptional({ format: 'uuid' })
  client_id?: string;
  /** client_secret_post: the broker-issued secret. Not together with HTTP Basic. */
  @ApiPropertyOptional()
  client_secret?: string;
}

/**
 * `authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5). The client authenticates with
 * its broker-issued secret, as `client_secret` here (client_secret_post) or with HTTP Basic
 * (client_secret_basic, then `client_id` may be left out); a public client (no credentials)
 * or a client metadata document URL sends `client_id` alone. In proxy mode the form is
 * forwarded to the upstream token endpoint with the agent's upstream client id.
 */
@ApiSchemaWith({ ...IGNORES_UNKNOWN })
export class AuthorizationCodeTokenRequest {
  @ApiProperty({ enum: ['authorization_code'] })
  grant_type!: 'authorization_code';
  /** The code from the authorization response (single use, 60 seconds). */
  @ApiProperty({ minLength: 1 })
  code!: string;
  /** Exactly the redirect_uri of the authorization request. */
  @ApiProperty({ format: 'uri' })
  redirect_uri!: string;
  /** RFC 7636 §4.1: the PKCE verifier whose S256 challenge the authorization request sent. */
  @ApiProperty({ minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9._~-]{43,128}$' })
  code_verifier!: string;
  /** The agent's UUID, or (local and hybrid modes, CIMD enabled) its client metadata document URL. Must equal the Basic user name when both are sent. */
  @ApiPropertyOptional()
  client_id?: string;
  /** client_secret_post: the broker-issued secret (proxy mode: the upstream secret). Not together with HTTP Basic. */
  @ApiPropertyOptional()
  client_secret?: string;
  /** RFC 8707 (local): one of the authorization request's resources, to narrow the token's `aud` to it (else `invalid_target`); without it, all of them. Either way still within the agent's `allowed_resources` when it has any (else `invalid_target`). Proxy: forwarded upstream. */
  @ApiPropertyOptional({ format: 'uri' })
  resource?: string;
}

/**
 * `client_credentials` (RFC 6749 §4.4; local and hybrid modes): an agent with
 * broker-issued credentials obtains a token for itself. The secret comes as
 * `client_secret` (client_secret_post) or with HTTP Basic (client_secret_basic).
 */
@ApiSchemaWith({ ...IGNORES_UNKNOWN })
export class ClientCredentialsTokenRequest extends AgentSecretForm {
  @ApiProperty({ enum: ['client_credentials'] })
  grant_type!: 'client_credentials';
  /** Space-delimited; each scope must be in the agent's allowed_scopes (an empty list allows all). */
  @ApiPropertyOptional()
  scope?: string;
  /** RFC 8707: the resource the token is for (its `aud`), within `local.resource_indicators.allowed_resources` and the agent's `allowed_resources` when it has any (else `invalid_target`). */
  @ApiPropertyOptional({ format: 'uri' })
  resource?: string;
}

/**
 * RFC 8693 token exchange by a trusted gateway (docs/oauth2.md): the
 * user's subject token and the gateway's client assertion (RFC 7523), both verified
 * against the configured trust anchor, buy the user's stored token for the service that
 * owns `resource`, given an active grant of the user to the agent for that service.
 */
@ApiSchemaWith({ ...IGNORES_UNKNOWN })
export class TokenExchangeTokenRequest {
  @ApiProperty({ enum: [TOKEN_EXCHANGE] })
  grant_type!: typeof TOKEN_EXCHANGE;
  /** The user's access token (JWT) naming the user and the agent (`token_exchange.claim_extraction`). */
  @ApiProperty({ minLength: 1 })
  subject_token!: string;
  @ApiProperty({ enum: [ACCESS_TOKEN_TYPE] })
  subject_token_type!: typeof ACCESS_TOKEN_TYPE;
  /** The gateway's signed JWT (RFC 7523), addressed to the broker. */
  @ApiProperty({ minLength: 1 })
  client_assertion!: string;
  @ApiProperty({ enum: [JWT_BEARER] })
  client_assertion_type!: typeof JWT_BEARER;
  /** The protected resource of a registered service (a trailing slash is ignored). */
  @ApiProperty({ format: 'uri' })
  resource!: string;
  /** Space-delimited. */
  @ApiPropertyOptional()
  scope?: string;
  /** Optional; an audience under the impersonation prefix makes the request an impersonation instead. */
  @ApiPropertyOptional()
  audience?: string;
}

/**
 * RFC 8693 token exchange as user impersonation (local mode,
 * proxy and hybrid refuse it with `invalid_target`): a privileged client (client
 * assertion) and an actor obtain a broker-signed access token for the subject user, with
 * `act` naming the actor, given the user's active delegation to the target agent. Activated
 * by an `audience` under `oauth2_authorization_server.impersonation.audience_prefix`;
 * `resource` must be absent.
 */
@ApiSchemaWith({ ...IGNORES_UNKNOWN, propertyNames: { not: { enum: ['resource'] } } })
export class ImpersonationTokenRequest {
  @ApiProperty({ enum: [TOKEN_EXCHANGE] })
  grant_type!: typeof TOKEN_EXCHANGE;
  /** `<audience_prefix>/<target>`: the target agent's lower-case UUID or its canonical_id. */
  @ApiProperty({ format: 'uri' })
  audience!: string;
  /** The privileged client's signed JWT (RFC 7523); never unsigned. */
  @ApiProperty({ minLength: 1 })
  client_assertion!: string;
  @ApiProperty({ enum: [JWT_BEARER] })
  client_assertion_type!: typeof JWT_BEARER;
  /** The actor's signed JWT; never unsigned. */
  @ApiProperty({ minLength: 1 })
  actor_token!: string;
  @ApiProperty({ enum: [JWT_TOKEN_TYPE] })
  actor_token_type!: typeof JWT_TOKEN_TYPE;
  /** The subject user's JWT: signed, or unsigned (`alg: none`) only under a rule with `verification: none`. */
  @ApiProperty({ minLength: 1 })
  subject_token!: string;
  @ApiProperty({ enum: [JWT_TOKEN_TYPE] })
  subject_token_type!: typeof JWT_TOKEN_TYPE;
  /** Only the access-token type. */
  @ApiPropertyOptional({ enum: [ACCESS_TOKEN_TYPE] })
  requested_token_type?: typeof ACCESS_TOKEN_TYPE;
  /** Space-delimited; each scope but `offline` and `offline_access` must be in the target's allowed_scopes. */
  @ApiPropertyOptional()
  scope?: string;
}

/**
 * The JWT bearer grant (RFC 7523 §2.1) with an enterprise IdP's Identity Assertion JWT
 * Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant §4.4; local and hybrid
 * modes, when `oauth2_authorization_server.enterprise.trusted_issuers` names one). A
 * confidential agent authenticates with its secret (HTTP Basic or `client_secret`); the token
 * is for the person and the MCP server the assertion names (docs/oauth2.md
 * "Enterprise-managed authorization"), with no refresh token.
 */
@ApiSchemaWith({ ...IGNORES_UNKNOWN })
export class JwtBearerTokenRequest extends AgentSecretForm {
  @ApiProperty({ enum: [JWT_BEARER_GRANT] })
  grant_type!: typeof JWT_BEARER_GRANT;
  /** The ID-JAG (`typ` `oauth-id-jag+jwt`), single use, issued to this agent for this broker's issuer. */
  @ApiProperty({ minLength: 1 })
  assertion!: string;
  /** Space-delimited; within the assertion's scopes (else `invalid_scope`); without it, the assertion's. */
  @ApiPropertyOptional()
  scope?: string;
  /** RFC 8707: one of the resources the assertion names (else `invalid_target`); without it, the assertion's one. */
  @ApiPropertyOptional({ format: 'uri' })
  resource?: string;
}

/** The token request models, to register with `@ApiExtraModels`. */
/**
 * The CIBA poll (OpenID CIBA Core 1.0 §10.1; local and hybrid modes with `ciba.enabled`,
 * docs/ciba.md): the requester of an `auth_req_id` asks for the token, with the same kind of
 * credentials it asked with: the agent's secret (Basic or post), or the gateway's client
 * assertion with `client_id` naming the agent. 400 `authorization_pending` until the person
 * decides, `slow_down` when polled sooner than `interval`, `access_denied` (400) when denied,
 * `expired_token`, `invalid_grant` for an unknown, another client's or used `auth_req_id`.
 */
@ApiSchemaWith({ ...IGNORES_UNKNOWN })
export class CibaTokenRequest {
  @ApiProperty({ enum: [CIBA_GRANT] })
  grant_type!: typeof CIBA_GRANT;
  /** From the backchannel authentication response; single use. */
  @ApiProperty({ minLength: 1 })
  auth_req_id!: string;
  /** The agent's UUID (left out with HTTP Basic); REQUIRED with a client assertion (the agent the gateway asked for). */
  @ApiPropertyOptional({ format: 'uuid' })
  client_id?: string;
  /** client_secret_post: the agent's broker-issued secret. Not together with HTTP Basic or an assertion. */
  @ApiPropertyOptional()
  client_secret?: string;
  /** The gateway's signed JWT (RFC 7523), when the gateway sent the request. */
  @ApiPropertyOptional()
  client_assertion?: string;
  @ApiPropertyOptional({ enum: [JWT_BEARER] })
  client_assertion_type?: typeof JWT_BEARER;
}

export const TOKEN_REQUEST_MODELS = [
  AuthorizationCodeTokenRequest,
  ClientCredentialsTokenRequest,
  TokenExchangeTokenRequest,
  ImpersonationTokenRequest,
  JwtBearerTokenRequest,
  CibaTokenRequest,
];

/**
 * `POST /oauth2/token`'s form: one of the grants by `grant_type`, the token exchange's
 * two profiles told apart by `subject_token_type` (and `audience`).
 */
export const TOKEN_REQUEST_SCHEMA: SchemaObject = {
  oneOf: TOKEN_REQUEST_MODELS.map((model) => ({ $ref: getSchemaPath(model) })),
};
