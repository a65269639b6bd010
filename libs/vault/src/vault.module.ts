import { Module } from '@nestjs/common';
import { EnvelopeCipher } from './envelope-cipher';
import { ProviderTokenClient } from './provider-token-client';
import { TokenVault } from './token-vault';

/** Envelope encryption of secrets at rest, and the third-party token vault. */
@Module({ providers: [EnvelopeCipher, ProviderTokenClient, TokenVault], exports: [EnvelopeCipher, ProviderTokenClient, TokenVault] })
export class VaultModule {}
