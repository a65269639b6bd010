/**
 * The vault: envelope encryption of every secret at rest (service client secrets,
 * signing keys, third-party tokens), encrypted tokens (JWE), and the third-party token
 * vault with single-flight refresh.
 */
export { VaultModule } from './vault.module';
export { EnvelopeCipher } from './envelope-cipher';
export { VaultError, type VaultErrorCode } from './vault-error';
export { JweCodec } from './jwe-codec';
export { bindings } from './bindings';
export {
  TokenVault,
  TokenVaultError,
  REFRESH_MARGIN_MS,
  type TokenVaultFailure,
  type UsableToken,
} from './token-vault';
export {
  ProviderTokenClient,
  ProviderRefused,
  ProviderUnavailable,
  sanitiseProviderText,
  type ProviderTokens,
} from './provider-token-client';
export { ProactiveRefreshSweeper, type SweepSummary } from './proactive-refresh/proactive-refresh.sweeper';
export { rewrapAll, type RewrapProgress } from './rewrap';
