import { VaultModule } from '@broker/vault';
import { Module } from '@nestjs/common';
import { AuthorizationSessionTokens } from './authorization-session/authorization-session-tokens';
import { ClientCredentialsService } from './client-credentials/client-credentials.service';
import { SigningKeyService } from './signing-keys/signing-key.service';

/**
 * The broker's OAuth2 authorization-server parts. So far: its signing keys and the
 * agents' client credentials; the authorize and token endpoints join with their issues.
 */
@Module({
  imports: [VaultModule],
  providers: [SigningKeyService, ClientCredentialsService, AuthorizationSessionTokens],
  exports: [SigningKeyService, ClientCredentialsService, AuthorizationSessionTokens],
})
export class OAuthServerModule {}
