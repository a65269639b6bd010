/** Why a vault operation failed. */
export type VaultErrorCode = 'decryption_failed' | 'unknown_key' | 'malformed_envelope';

/**
 * A ciphertext could not be opened: tampered with, bound to another owner or purpose,
 * or encrypted under a KEK that is no longer configured. Never carries key material.
 */
export class VaultError extends Error {
  constructor(
    readonly code: VaultErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'VaultError';
  }
}
