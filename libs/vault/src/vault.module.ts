import { Module } from '@nestjs/common';
import { EnvelopeCipher } from './envelope-cipher';

/** Envelope encryption of secrets at rest. */
@Module({ providers: [EnvelopeCipher], exports: [EnvelopeCipher] })
export class VaultModule {}
