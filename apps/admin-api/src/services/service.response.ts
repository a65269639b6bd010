import { thirdPartyCallbackUrl, type Service, type TokenEndpointAuthMethod } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class ServiceScopeResponse {
  @ApiProperty({ example: 'calendar.read' })
  scope!: string;
  /** `""` when none was given. */
  @ApiProperty({ example: 'Read your calendar' })
  description!: string;
}

/** A service as the admin API shows it; the secret is never shown. Absent values are `null`. */
export class ServiceResponse {
  @ApiProperty({ example: '8d2e4f60-1b3a-4c5d-8e9f-0a1b2c3d4e5f', format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'Google Calendar' })
  display_name!: string;
  @ApiProperty({ example: 'Your calendar, read by agents you allow.' })
  description!: string | null;
  @ApiProperty({ example: 'https://calendar.example.com/logo.png', format: 'uri' })
  logo_url!: string | null;
  @ApiProperty({ example: 'broker-calendar-client' })
  client_id!: string;
  /** `"REDACTED"` when a secret is stored, `null` otherwise: the secret itself is write-only. */
  @ApiProperty({ example: 'REDACTED', type: 'string', enum: ['REDACTED'], nullable: true })
  client_secret!: 'REDACTED' | null;
  @ApiProperty({ example: 'client_secret_basic' })
  token_endpoint_auth_method!: TokenEndpointAuthMethod;
  @ApiProperty({ example: 'https://calendar.example.com', format: 'uri' })
  issuer_uri!: string;
  @ApiProperty({ example: 'https://calendar.example.com/oauth2/authorize', format: 'uri' })
  authorization_endpoint!: string;
  @ApiProperty({ example: 'https://calendar.example.com/oauth2/token', format: 'uri' })
  token_endpoint!: string;
  @ApiProperty()
  scopes!: ServiceScopeResponse[];
  /** Normalised: scheme and host lower-case, no trailing slash. */
  @ApiProperty({
    example: ['https://calendar.example.com/api'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
  })
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
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
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
