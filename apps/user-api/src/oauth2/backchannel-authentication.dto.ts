import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ApiSchemaWith } from './open-schema';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * `POST /oauth2/bc-authorize`'s form (OpenID CIBA Core 1.0 §7.1, docs/ciba.md "The endpoint").
 * The client authenticates as at the token endpoint: the agent with its broker-issued secret
 * (Basic or `client_secret`), or the gateway with its client assertion and `client_id` naming
 * the agent. `request`, `login_hint_token`, `id_token_hint` and `user_code` are refused
 * (`invalid_request`); other unknown parameters are ignored.
 */
@ApiSchemaWith({ additionalProperties: true })
export class BackchannelAuthenticationRequest {
  /** The person to ask, mapped to a principal by `ciba.login_hint.expression` (default: the hint is the principal). */
  @ApiProperty({ minLength: 1 })
  login_hint!: string;
  /**
   * RFC 9396: a JSON array holding exactly one entry of type `urn:agent-identity-broker:tool-call` (the tool call;
   * `locations` is a registered MCP server's resource URI), at most 64 KiB (docs/ciba.md "The authorization_details type").
   */
  @ApiProperty({
    minLength: 2,
    example:
      '[{"type":"urn:agent-identity-broker:tool-call","locations":["https://mcp.example.com/mcp"],"tool":"send_payment","arguments":{"amount_eur":120}}]',
  })
  authorization_details!: string;
  /** Space-delimited; each a scope the person's grant gives the agent for that MCP server. `openid` is refused. */
  @ApiPropertyOptional()
  scope?: string;
  /** Shown to the person on the approval page to match with what the agent shows: 1-100 characters, no control characters. */
  @ApiPropertyOptional({ minLength: 1, maxLength: 100 })
  binding_message?: string;
  /** Seconds the request may wait for the person, at most `ciba.max_expiry` (default `ciba.default_expiry`). */
  @ApiPropertyOptional({ pattern: '^[1-9][0-9]*$' })
  requested_expiry?: string;
  /** The agent's UUID (left out with HTTP Basic); REQUIRED with a client assertion. */
  @ApiPropertyOptional({ format: 'uuid' })
  client_id?: string;
  /** client_secret_post: the agent's broker-issued secret. */
  @ApiPropertyOptional()
  client_secret?: string;
  /** The gateway's signed JWT (RFC 7523 §2.2), addressed to the broker. */
  @ApiPropertyOptional()
  client_assertion?: string;
  @ApiPropertyOptional({ enum: [JWT_BEARER] })
  client_assertion_type?: typeof JWT_BEARER;
}

/** OpenID CIBA Core 1.0 §7.3: the request is stored; poll the token endpoint with `auth_req_id`. */
@ApiSchemaWith({ additionalProperties: true })
export class BackchannelAuthenticationResponseBody {
  /** Opaque, single use (43 characters). */
  @ApiProperty({ minLength: 1 })
  auth_req_id!: string;
  /** Seconds until the request expires. */
  @ApiProperty({ type: 'integer', minimum: 1 })
  expires_in!: number;
  /** The least seconds between two polls (`ciba.interval`); polling sooner is `slow_down`. */
  @ApiProperty({ type: 'integer', minimum: 1 })
  interval!: number;
}

/** Never cached. */
export const BACKCHANNEL_RESPONSE_HEADERS: HeadersObject = {
  'Cache-Control': { description: '`no-store`', schema: { type: 'string', example: 'no-store' } },
};
