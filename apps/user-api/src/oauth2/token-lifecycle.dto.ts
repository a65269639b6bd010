import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ApiSchemaWith } from './open-schema';
import { AUTHORIZATION_DETAILS_SCHEMA } from './token.response';

/**
 * RFC 7009 §2.1. The client authenticates as at the token endpoint: its broker-issued secret
 * in the form (client_secret_post) or with HTTP Basic; a public agent or a client metadata
 * document URL sends `client_id` alone. Unknown parameters are ignored; a repeated one is
 * `invalid_request`.
 */
@ApiSchemaWith({ name: 'RevocationRequest', additionalProperties: true })
export class RevocationRequest {
  /** The access token (a JWT of this broker) or refresh token to revoke. */
  @ApiProperty({ minLength: 1 })
  token!: string;
  /** Only a hint (the token's form decides where the broker looks); any value is accepted. */
  @ApiPropertyOptional({ examples: ['access_token', 'refresh_token'] })
  token_type_hint?: string;
  @ApiPropertyOptional()
  client_id?: string;
  @ApiPropertyOptional()
  client_secret?: string;
}

/**
 * RFC 7662 §2.1. The caller authenticates: a confidential agent with its secret (Basic or
 * post), or the gateway with its client assertion (RFC 7523, as at the token exchange).
 */
@ApiSchemaWith({ name: 'IntrospectionRequest', additionalProperties: true })
export class IntrospectionRequest {
  /** The access token (a JWT of this broker) or refresh token to introspect. */
  @ApiProperty({ minLength: 1 })
  token!: string;
  /** Only a hint (the token's form decides where the broker looks); any value is accepted. */
  @ApiPropertyOptional({ examples: ['access_token', 'refresh_token'] })
  token_type_hint?: string;
  @ApiPropertyOptional()
  client_id?: string;
  @ApiPropertyOptional()
  client_secret?: string;
  @ApiPropertyOptional({ enum: ['urn:ietf:params:oauth:client-assertion-type:jwt-bearer'] })
  client_assertion_type?: string;
  /** The gateway's client assertion (a JWT of the trust anchor's issuer, audience the broker). */
  @ApiPropertyOptional()
  client_assertion?: string;
}

/**
 * RFC 7662 §2.2. An inactive token (or one the caller may not see) is exactly
 * `{"active": false}`; an active one carries the members below that apply.
 */
@ApiSchemaWith({ name: 'IntrospectionResponse', additionalProperties: false })
export class IntrospectionResponseBody {
  @ApiProperty()
  active!: boolean;
  /** Space-separated scopes; absent when the token has none. */
  @ApiPropertyOptional()
  scope?: string;
  /** The agent id the token was issued to. */
  @ApiPropertyOptional({ format: 'uuid' })
  client_id?: string;
  /** The person, or the agent id for the agent's own (client_credentials) token. */
  @ApiPropertyOptional()
  sub?: string;
  /**
   * The audience, a string for one, an array for several: an access token's `aud` (its RFC 8707 resources, else the
   * default audience, docs/oauth2.md "Default audience"); a refresh token's resources, absent when it has none.
   */
  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  aud?: string | string[];
  @ApiPropertyOptional({ type: 'integer' })
  exp?: number;
  @ApiPropertyOptional({ type: 'integer' })
  iat?: number;
  @ApiPropertyOptional({ format: 'uri' })
  iss?: string;
  /** Access tokens only. */
  @ApiPropertyOptional({ format: 'uuid' })
  jti?: string;
  /**
   * `Bearer` for an access token, `DPoP` for an access token bound to a DPoP key (RFC 9449 §6.2), `refresh_token` for
   * a refresh token (never to be accepted as a bearer token).
   */
  @ApiPropertyOptional({ enum: ['Bearer', 'DPoP', 'refresh_token'] })
  token_type?: string;
  /** RFC 8693 §4.1: the actor of an impersonation token. */
  @ApiPropertyOptional({
    type: 'object',
    properties: { iss: { type: 'string' }, sub: { type: 'string' } },
    required: ['iss', 'sub'],
  })
  act?: { iss: string; sub: string };
  /** RFC 9449 §6.2: the DPoP key a bound access token is for, as its RFC 7638 SHA-256 thumbprint. */
  @ApiPropertyOptional({
    type: 'object',
    properties: { jkt: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } },
    required: ['jkt'],
  })
  cnf?: { jkt: string };
  /** RFC 9396 §9.1: an access token's `authorization_details` (a backchannel request's approved tool call), as it carries them. */
  @ApiPropertyOptional(AUTHORIZATION_DETAILS_SCHEMA)
  authorization_details?: Record<string, unknown>[];
}

/** RFC 7009 §2.2, RFC 7662 §2.2: the answers are not to be cached. */
export const LIFECYCLE_RESPONSE_HEADERS: HeadersObject = {
  'Cache-Control': { description: '`no-store`', schema: { type: 'string', example: 'no-store' } },
};
