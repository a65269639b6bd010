import { TOOL_CALL_TYPE } from '@broker/oauth-server';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import type { HeadersObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ApiSchemaWith } from './open-schema';

const UUID: SchemaObject = { type: 'string', format: 'uuid' };

/** Keys are permission-set ids (JSON Schema 2020-12 `propertyNames`, which Nest's types do not list). */
const UUID_KEYS = { propertyNames: UUID };

/**
 * RFC 9396 `authorization_details` as a token carries them: exactly one entry of the broker's tool-call type
 * (docs/ciba.md "The authorization_details type", docs/tool-call.schema.json), as the person approved it.
 */
export const AUTHORIZATION_DETAILS_SCHEMA: ApiPropertyOptions = {
  type: 'array',
  minItems: 1,
  maxItems: 1,
  items: {
    type: 'object',
    required: ['type', 'locations', 'tool', 'arguments'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', enum: [TOOL_CALL_TYPE] },
      locations: { type: 'array', items: { type: 'string', format: 'uri' }, minItems: 1, maxItems: 1 },
      actions: { type: 'array', items: { type: 'string', enum: ['call'] }, minItems: 1, maxItems: 1 },
      tool: { type: 'string', minLength: 1, maxLength: 255 },
      title: { type: 'string', minLength: 1, maxLength: 200 },
      description: { type: 'string', minLength: 1, maxLength: 2000 },
      arguments: { type: 'object', additionalProperties: true },
      risk: { type: 'string', enum: ['low', 'medium', 'critical'] },
    },
  },
};

/**
 * A successful token response (RFC 6749 §5.1, RFC 8693 §2.2.1), without a `data`
 * envelope. Members the broker has nothing for are left out (the RFCs' shape), never null:
 * - authorization_code and client_credentials (local): `access_token` (a broker-signed
 *   JWT), `token_type` `Bearer`, `expires_in`, `scope` when one was granted;
 * - third-party token exchange: the user's stored token, `token_type` as stored,
 *   `issued_token_type`, `granted_permission_sets`, `expires_in` when the stored token
 *   expires, `scope` when it differs from the request;
 * - impersonation: a broker-signed JWT, `token_type` `Bearer`, `issued_token_type`,
 *   `expires_in`, `scope` when not empty;
 * - an enterprise identity assertion (JWT bearer grant): a broker-signed JWT, `token_type`,
 *   `expires_in`, `scope` when not empty, `resource`, and never a refresh token;
 * - the CIBA grant: a broker-signed JWT, `token_type`, `expires_in`, `scope` when not empty,
 *   `authorization_details`, and never a refresh or ID token;
 * - authorization_code in proxy mode: the upstream's answer as it sent it (for example
 *   with `id_token` or `refresh_token`), hence members beyond these may appear.
 */
@ApiSchemaWith({ additionalProperties: true })
export class TokenResponse {
  /** The broker's own JWT, a user's stored third-party token, or the upstream's token. */
  @ApiProperty()
  access_token!: string;
  /**
   * `Bearer` for the broker's own tokens, `DPoP` for those bound to the request's DPoP proof (RFC 9449 §5); a stored
   * token's own type for a third-party exchange.
   */
  @ApiProperty({ example: 'Bearer' })
  token_type!: string;
  /** Seconds until the access token expires. */
  @ApiPropertyOptional({ type: 'integer', minimum: 0 })
  expires_in?: number;
  /** Space-delimited scopes of the token. */
  @ApiPropertyOptional()
  scope?: string;
  /** Token exchange (RFC 8693 §2.2.1): always the access-token type. */
  @ApiPropertyOptional({ enum: ['urn:ietf:params:oauth:token-type:access_token'] })
  issued_token_type?: string;
  /** Third-party token exchange: permission-set id → the service ids the user's grant delegates under it. */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'array', items: UUID, minItems: 1 },
    ...UUID_KEYS,
  })
  granted_permission_sets?: Record<string, string[]>;
  /** The JWT bearer grant with an enterprise identity assertion: the resource (MCP server) the token is for, its `aud`. */
  @ApiPropertyOptional({ format: 'uri' })
  resource?: string;
  /** RFC 9396 §7: the backchannel (CIBA) grant's token: the one tool call the person approved, as the token carries it. */
  @ApiPropertyOptional(AUTHORIZATION_DETAILS_SCHEMA)
  authorization_details?: Record<string, unknown>[];
  /** Only when relayed from an upstream that issued one (proxy mode); the broker issues none. */
  @ApiPropertyOptional()
  refresh_token?: string;
  /** Only when relayed from an upstream OpenID provider (proxy mode). */
  @ApiPropertyOptional()
  id_token?: string;
}

/** RFC 6749 §5.1: token responses are never cached. */
export const TOKEN_RESPONSE_HEADERS: HeadersObject = {
  'Cache-Control': {
    description: '`no-store` (proxy mode: as the upstream sent it)',
    schema: { type: 'string', example: 'no-store' },
  },
  Pragma: {
    description: '`no-cache` (proxy mode: as the upstream sent it)',
    schema: { type: 'string', example: 'no-cache' },
  },
  'DPoP-Nonce': {
    description:
      'The nonce the next DPoP proof must carry (RFC 9449 §8.2), when the request carried a proof and `local.dpop.nonce.required` is on',
    schema: { type: 'string' },
  },
};
