/** OAuth2 authorization server: signing keys, client credentials (endpoints arrive with their issues). */
export { OAuthServerModule } from './oauth-server.module';
export { SigningKeyService, type CurrentSigningKey, type JsonWebKeySet } from './signing-keys/signing-key.service';
export { ClientCredentialsService, CLIENT_SECRET_PREFIX, type IssuedClientCredentials, type ClientCredentialsMetadata } from './client-credentials/client-credentials.service';
