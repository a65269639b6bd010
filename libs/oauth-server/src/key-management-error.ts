/**
 * Why a key or credential operation of the admin plane was refused. The library names the
 * rule; the admin API's vocabulary chooses the wire code and status.
 */
export type KeyManagementErrorCode =
  /** No agent with this id. */
  | 'agent_missing'
  /** The agent has no client credentials. */
  | 'client_credentials_missing'
  /** No signing key with this kid. */
  | 'signing_key_missing'
  /** The last signing key cannot be deleted. */
  | 'last_signing_key'
  /** The current signing key cannot be deleted. */
  | 'current_signing_key';

/** A key or credential operation refused by a rule; `message` is safe to send as is. */
export class KeyManagementError extends Error {
  constructor(
    readonly code: KeyManagementErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeyManagementError';
  }
}
