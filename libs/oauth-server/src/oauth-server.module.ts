import { AuditModule } from '@broker/audit';
import { VaultModule } from '@broker/vault';
import { Module } from '@nestjs/common';
import { AuthorizationSessionTokens } from './authorization-session/authorization-session-tokens';
import { AuthorizationDenial } from './authorize/authorization-denial';
import { AUTHORIZE_STRATEGY } from './authorize/authorize-strategy';
import { CimdClients } from './cimd/cimd-clients';
import { ClientMetadataDocuments } from './cimd/client-metadata-documents';
import { ClientCredentialsService } from './client-credentials/client-credentials.service';
import { AuthorizationServerMetadataService } from './metadata/authorization-server-metadata';
import { ResourceIndicators } from './resource/resource-indicators';
import { ResourceConsent } from './resource/resource-consent';
import { JWKS_SOURCE } from './metadata/jwks-source';
import { MODE_STRATEGY_PROVIDERS, STRATEGY_IMPLEMENTATIONS } from './mode-strategies';
import { EnterpriseAuthorizationRevocation } from './enterprise/enterprise-revocation';
import { SigningKeyService } from './signing-keys/signing-key.service';
import { AccessTokenIssuer } from './token/access-token-issuer';
import { DpopProofs } from './dpop/dpop-proofs';
import { ClientAuthenticator } from './token/client-authenticator';
import { RefreshTokens } from './token/refresh-tokens';
import { TokenEndpoint } from './token/token-endpoint';
import { GatewayCredentials } from './token-exchange/gateway-credentials';
import { AuthorizationRequestOffers } from './token-exchange/authorization-request-offers';
import { LifecycleClients } from './token-lifecycle/lifecycle-clients';
import { LocalTokenVerifier } from './token-lifecycle/local-token-verifier';
import { TokenIntrospection } from './token-lifecycle/token-introspection';
import { TokenLifecycleEndpoints } from './token-lifecycle/token-lifecycle-endpoints';
import { TokenRevocation } from './token-lifecycle/token-revocation';
import { BackchannelAuthentication } from './ciba/backchannel-authentication';
import { LoginHints } from './ciba/login-hints';

/**
 * The broker's OAuth2 authorization server: signing keys, client credentials,
 * authorization session tokens, `/oauth2/authorize`, `/oauth2/token` (a dispatcher over
 * grant strategies), JWKS and metadata, with the mode's strategies bound once at boot.
 * `GatewayCredentials` is exported so the approvals API verifies gateways with the same
 * instance (one trust-anchor key set and verified-token cache per process application).
 */
@Module({
  imports: [VaultModule, AuditModule],
  providers: [
    SigningKeyService,
    ClientCredentialsService,
    AuthorizationSessionTokens,
    AccessTokenIssuer,
    DpopProofs,
    ClientAuthenticator,
    RefreshTokens,
    ClientMetadataDocuments,
    CimdClients,
    ResourceIndicators,
    ResourceConsent,
    ...STRATEGY_IMPLEMENTATIONS,
    AuthorizationRequestOffers,
    TokenEndpoint,
    LocalTokenVerifier,
    LifecycleClients,
    TokenRevocation,
    TokenIntrospection,
    TokenLifecycleEndpoints,
    AuthorizationServerMetadataService,
    AuthorizationDenial,
    EnterpriseAuthorizationRevocation,
    LoginHints,
    BackchannelAuthentication,
    ...MODE_STRATEGY_PROVIDERS,
  ],
  exports: [
    AuthorizationDenial,
    ResourceIndicators,
    GatewayCredentials,
    AuthorizationRequestOffers,
    SigningKeyService,
    ClientCredentialsService,
    AuthorizationSessionTokens,
    TokenEndpoint,
    DpopProofs,
    TokenLifecycleEndpoints,
    AuthorizationServerMetadataService,
    AUTHORIZE_STRATEGY,
    JWKS_SOURCE,
    EnterpriseAuthorizationRevocation,
    BackchannelAuthentication,
  ],
})
export class OAuthServerModule {}
