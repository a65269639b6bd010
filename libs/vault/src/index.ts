/**
 * The vault: envelope encryption of every secret at rest (service client secrets,
 * signing keys, and third-party tokens).
 */
export { VaultModule } from './vault.module';
export { EnvelopeCipher } from './envelope-cipher';
export { VaultError, type VaultErrorCode } from './vault-error';
export { JweCodec } from './jwe-codec';
