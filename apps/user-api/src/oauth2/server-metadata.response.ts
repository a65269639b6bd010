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
  /** local: authorization_code, client_credentials, token exchange; proxy: authorization_code, token exchange; hybrid: all three. */
  @ApiProperty({ enum: ['authorization_code', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'], isArray: true })
  grant_types_supported!: string[];
  @ApiProperty({ enum: ['S256'], isArray: true })
  code_challenge_methods_supported!: string[];
  @ApiProperty({ enum: ['client_secret_basic', 'client_secret_post', 'none'], isArray: true })
  token_endpoint_auth_methods_supported!: string[];
  /** RFC 9207: authorization responses carry `iss`. */
  authorization_response_iss_parameter_supported!: boolean;
  /** Client ID Metadata Documents accepted as `client_id`: present (true) in local and hybrid modes with `oauth2_authorization_server.cimd.enabled`, absent otherwise. */
  @ApiPropertyOptional({ type: Boolean, enum: [true] })
  client_id_metadata_document_supported?: boolean;
}

/** SPEC.md "GET /.well-known/oauth-authorization-server". */
export const SERVER_METADATA_HEADERS: HeadersObject = {
  'Cache-Control': { description: '`public, max-age=3600`', schema: { type: 'string', example: 'public, max-age=3600' } },
};
