import { thirdPartyCallbackUrl, type Service, type TokenEndpointAuthMethod } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class ServiceScopeResponse {
  @ApiProperty()
  scope!: string;
  /** `""` when none was given. */
  @ApiProperty()
  description!: string;
}

/** A service as the admin API shows it; the secret is never shown. Absent values are `null`. */
export class ServiceResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty()
  display_name!: string;
  @ApiProperty()
  description!: string | null;
  @ApiProperty({ format: 'uri' })
  logo_url!: string | null;
  @ApiProperty()
  client_id!: string;
  /** `"REDACTED"` when a secret is stored, `null` otherwise: the secret itself is write-only. */
  @ApiProperty({ type: 'string', enum: ['REDACTED'], nullable: true })
  client_secret!: 'REDACTED' | null;
  @ApiProperty()
  token_endpoint_auth_method!: TokenEndpointAuthMethod;
  @ApiProperty({ format: 'uri' })
  issuer_uri!: string;
  @ApiProperty({ format: 'uri' })
  authorization_endpoint!: string;
  @ApiProperty({ format: 'uri' })
  token_endpoint!: string;
  @ApiProperty()
  scopes!: ServiceScopeResponse[];
  /** Normalised: scheme and host lower-case, no trailing slash. */
  @ApiProperty({ type: 'array', items: { type: 'string', format: 'uri' } })
  protected_resources!: string[];
  /**
   * The broker's redirect URI for this service: register exactly this URL at the provider (its client's redirect
   * URIs) before anyone connects an account. Derived from `server.enduser.public_url`; never stored.
   */
  @ApiProperty({
    format: 'uri',
    example: 'https://broker.example.com/api/third-party/3f0c1a2b-4d5e-4f60-8a9b-0c1d2e3f4a5b/oauth2/callback',
  })
  callback_url!: string;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

/** The admin API's view of a service; `enduserPublicUrl` names the callback URL it shows. */
export function toServiceResponse(service: Service, enduserPublicUrl: string): ServiceResponse {
  return {
    id: service.id,
    display_name: service.displayName,
    description: service.description,
    logo_url: service.logoUrl,
    client_id: service.clientId,
    client_secret: service.hasClientSecret ? 'REDACTED' : null,
    token_endpoint_auth_method: service.tokenEndpointAuthMethod,
    issuer_uri: service.issuerUri,
    authorization_endpoint: service.authorizationEndpoint,
    token_endpoint: service.tokenEndpoint,
    scopes: service.scopes.map((s) => ({ scope: s.scope, description: s.description })),
    protected_resources: [...service.protectedResources],
    callback_url: thirdPartyCallbackUrl(enduserPublicUrl, service.id),
    created_at: service.createdAt.toISOString(),
    updated_at: service.updatedAt.toISOString(),
  };
}
