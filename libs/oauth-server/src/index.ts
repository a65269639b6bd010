/** OAuth2 authorization server: signing keys, client credentials (endpoints arrive with their issues). */
export { OAuthServerModule } from './oauth-server.module';
export { SigningKeyService, type CurrentSigningKey, type JsonWebKeySet } from './signing-keys/signing-key.service';
export { generateSigningKey, importPrivateKey, signCompactJws } from './signing-keys/key-material';
export {
  ClientCredentialsService,
  CLIENT_SECRET_PREFIX,
  type IssuedClientCredentials,
  type ClientCredentialsMetadata,
} from './client-credentials/client-credentials.service';
export {
  AuthorizationSessionTokens,
  AUTHORIZATION_SESSION_RETURN_SECONDS,
  AUTHORIZATION_SESSION_TTL_SECONDS,
  type AuthorizationSession,
  type NewAuthorizationSession,
  type CimdSnapshot,
} from './authorization-session/authorization-session-tokens';
export { TokenEndpoint } from './token/token-endpoint';
export { DpopProofs } from './dpop/dpop-proofs';
export { TokenLifecycleEndpoints } from './token-lifecycle/token-lifecycle-endpoints';
export type { IntrospectionResponse } from './token-lifecycle/token-introspection';
export { isRelayed, type TokenOutcome, type RelayedResponse, type TokenRequestContext } from './token/grant-strategy';
export type { TokenResponse } from './token/access-token-issuer';
export { AUTHORIZE_STRATEGY, type AuthorizeStrategy, type AuthorizationRequest } from './authorize/authorize-strategy';
export { JWKS_SOURCE, type JwksSource } from './metadata/jwks-source';
export {
  AuthorizationServerMetadataService,
  type AuthorizationServerMetadata,
} from './metadata/authorization-server-metadata';
export { AuthorizationDenial } from './authorize/authorization-denial';
export { ResourceIndicators } from './resource/resource-indicators';
export { AuthorizationCodePurge, AUTHORIZATION_CODE_PURGE } from './authorize/authorization-code-purge';
export {
  AuthorizationRequestOffers,
  type AuthorizationRequestMember,
  type OfferableRefusal,
} from './token-exchange/authorization-request-offers';
export { TrustAnchor, type AnchorPurpose } from './token-exchange/trust-anchor';
export {
  JwtVerifier,
  JwtRejected,
  ASYMMETRIC_ALGORITHMS,
  CLOCK_TOLERANCE_SECONDS,
  type VerifyOptions,
} from './jwt/jwt-verifier';
export { RemoteKeySet, TRUSTED_KEYS_POLICY, type RemoteKeySetPolicy } from './jwt/remote-key-set';
export { VerifiedJwtCache, VERIFIED_JWT_CACHE_ENTRIES } from './jwt/verified-jwt-cache';
export {
  GatewayCredentials,
  GatewayCredentialsRefused,
  type GatewayRefusal,
  type SubjectIdentity,
} from './token-exchange/gateway-credentials';
export { compileConfigExpression } from './token/config-expression';
export {
  readImpersonationSettings,
  type ImpersonationSettings,
  type ImpersonationRule,
} from './impersonation/impersonation-rules';
export { KeyManagementError, type KeyManagementErrorCode } from './key-management-error';
export { EnterpriseAuthorizationRevocation, type EnterpriseRevoker } from './enterprise/enterprise-revocation';
export {
  TOOL_CALL_TYPE,
  parseToolCallDetails,
  canonicalDetailJson,
  type ToolCallDetail,
} from './ciba/tool-call-details';
export { BackchannelAuthentication, type BackchannelAuthenticationResponse } from './ciba/backchannel-authentication';
export { CIBA_GRANT } from './ciba/ciba.grant';
export {
  CIBA_REQUESTS,
  type CibaRequestsPort,
  type CibaRequester,
  type CibaRequestInput,
  type CibaRequestOutcome,
  type CibaPollOutcome,
} from './ciba/ciba-requests-port';
