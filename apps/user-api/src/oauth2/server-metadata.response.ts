import { ASYMMETRIC_ALGORITHMS } from '@broker/domain';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * RFC 8414 authorization server metadata, as the broker publishes it in every mode: its
 * own public URL as issuer and endpoints, the grant types of the mode (hybrid: the union
 * of local and proxy).
 */
@ApiSchema({ name: 'AuthorizationServerMetadata' })
export class AuthorizationServerMetadataResponse {
  /** `oauth2_authorization_server.local.issuer_uri`, else the end-user server's public URL. */
  @ApiProperty({ format: 'uri' })
  issuer!: string;
  @ApiProperty({ format: 'uri' })
  authorization_endpoint!: string;
  @ApiProperty({ format: 'uri' })
  token_endpoint!: string;
  @ApiProperty({ format: 'uri' })
  jwks_uri!: string;
  @ApiProperty({ enum: ['code'], isArray: true })
  response_types_supported!: string[];
  /** local: authorization_code, refresh_token (with `local.refresh_tokens.enabled`), client_credentials, token exchange, the JWT bearer grant when an enterprise IdP is trusted, and the CIBA grant with `ciba.enabled`; proxy: authorization_code, token exchange; hybrid: all of them. */
  @ApiProperty({
    enum: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:openid:params:grant-type:ciba',
    ],
    isArray: true,
  })
  grant_types_supported!: string[];
  @ApiProperty({ enum: ['S256'], isArray: true })
  code_challenge_methods_supported!: string[];
  /** An agent's secret (Basic or post), a public agent's `client_id` alone (`none`), and the gateway's client assertion (`private_key_jwt`, RFC 7523) for the token exchange. */
  @ApiProperty({ enum: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'], isArray: true })
  token_endpoint_auth_methods_supported!: string[];
  /** RFC 8414 §2: the algorithms of a `private_key_jwt` client assertion the token endpoint accepts (asymmetric only, never `none`); present whenever `private_key_jwt` is listed. */
  @ApiPropertyOptional({ enum: [...ASYMMETRIC_ALGORITHMS], isArray: true })
  token_endpoint_auth_signing_alg_values_supported?: string[];
  /** RFC 9207: authorization responses carry `iss`. */
  authorization_response_iss_parameter_supported!: boolean;
  /** Client ID Metadata Documents accepted as `client_id`: present (true) in local and hybrid modes with `oauth2_authorization_server.cimd.enabled`, absent otherwise. */
  @ApiPropertyOptional({ type: Boolean, enum: [true] })
  client_id_metadata_document_supported?: boolean;
  /** RFC 9449 §5.1: the DPoP proof algorithms the token endpoint accepts (`oauth2_authorization_server.local.dpop.signing_algorithms`); absent in proxy mode or with DPoP turned off. */
  @ApiPropertyOptional({ type: String, isArray: true })
  dpop_signing_alg_values_supported?: string[];
  /** `["offline_access"]` (refresh tokens) in local and hybrid modes with `oauth2_authorization_server.local.refresh_tokens.enabled`; absent otherwise. */
  @ApiPropertyOptional({ enum: ['offline_access'], isArray: true })
  scopes_supported?: string[];
  /** RFC 7009 token revocation (local and hybrid modes; absent in proxy mode). */
  @ApiPropertyOptional({ format: 'uri' })
  revocation_endpoint?: string;
  @ApiPropertyOptional({ enum: ['client_secret_basic', 'client_secret_post', 'none'], isArray: true })
  revocation_endpoint_auth_methods_supported?: string[];
  /** RFC 7662 token introspection (local and hybrid modes; absent in proxy mode). */
  @ApiPropertyOptional({ format: 'uri' })
  introspection_endpoint?: string;
  /** A confidential agent's secret, or the gateway's client assertion (`private_key_jwt`, RFC 7523). */
  @ApiPropertyOptional({ enum: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'], isArray: true })
  introspection_endpoint_auth_methods_supported?: string[];
  /** RFC 8414 §2: the algorithms of the gateway's client assertion at the introspection endpoint (asymmetric only, never `none`); present with the endpoint. */
  @ApiPropertyOptional({ enum: [...ASYMMETRIC_ALGORITHMS], isArray: true })
  introspection_endpoint_auth_signing_alg_values_supported?: string[];
  /** `["urn:ietf:params:oauth:grant-profile:id-jag"]` when an enterprise IdP is trusted (`oauth2_authorization_server.enterprise`, local and hybrid modes); absent otherwise. Never which IdPs. */
  @ApiPropertyOptional({ enum: ['urn:ietf:params:oauth:grant-profile:id-jag'], isArray: true })
  authorization_grant_profiles_supported?: string[];
  /** OpenID CIBA Core 1.0 §4: `<public_url>/oauth2/bc-authorize` with `oauth2_authorization_server.ciba.enabled` (local and hybrid modes); absent otherwise, as the three members below. */
  @ApiPropertyOptional({ format: 'uri' })
  backchannel_authentication_endpoint?: string;
  /** Poll mode only. */
  @ApiPropertyOptional({ enum: ['poll'], isArray: true })
  backchannel_token_delivery_modes_supported?: string[];
  /** No `user_code` is taken. */
  @ApiPropertyOptional({ type: Boolean, enum: [false] })
  backchannel_user_code_parameter_supported?: boolean;
  /** RFC 9396 §10: the tool-call type of `authorization_details` (docs/ciba.md). */
  @ApiPropertyOptional({ enum: ['urn:agent-identity-broker:tool-call'], isArray: true })
  authorization_details_types_supported?: string[];
}

/** `GET /.well-known/oauth-authorization-server` (RFC 8414 §3). */
export const SERVER_METADATA_HEADERS: HeadersObject = {
  'Cache-Control': {
    description: '`public, max-age=3600`',
    schema: { type: 'string', example: 'public, max-age=3600' },
  },
};
