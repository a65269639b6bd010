import { Module } from '@nestjs/common';
import { EnvelopeCipher } from './envelope-cipher';
import { ProactiveRefreshSweeper } from './proactive-refresh/proactive-refresh.sweeper';
import { ProviderTokenClient } from './provider-token-client';
import { TokenVault } from './token-vault';

/** Envelope encryption of secrets at rest, the third-party token vault, and its proactive refresh sweep. */
@Module({
  providers: [EnvelopeCipher, ProviderTokenClient, TokenVault, ProactiveRefreshSweeper],
  exports: [EnvelopeCipher, ProviderTokenClient, TokenVault, ProactiveRefreshSweeper],
})
export class VaultModule {}
