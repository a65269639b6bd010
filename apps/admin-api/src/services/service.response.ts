import type { Service, TokenEndpointAuthMethod } from '@broker/domain';

export class ServiceScopeResponse {
  scope!: string;
  description!: string;
}

/** A service as the admin API shows it; the secret is never shown. */
export class ServiceResponse {
  id!: string;
  display_name!: string;
  description!: string | null;
  logo_url!: string | null;
  client_id!: string;
  /** "REDACTED" when a secret is stored, null otherwise. */
  client_secret!: 'REDACTED' | null;
  token_endpoint_auth_method!: TokenEndpointAuthMethod;
  issuer_uri!: string;
  authorization_endpoint!: string;
  token_endpoint!: string;
  scopes!: ServiceScopeResponse[];
  protected_resources!: string[];
  created_at!: string;
  updated_at!: string;
}

export function toServiceResponse(service: Service): ServiceResponse {
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
    created_at: service.createdAt.toISOString(),
    updated_at: service.updatedAt.toISOString(),
  };
}
