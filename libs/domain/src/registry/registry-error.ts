/**
 * Why the registry (agents and their assignments) refused a write. The repository names
 * the rule; the admin API alone chooses the wire code and status (STYLE.md shape 3: error
 * codes are chosen only at the edge).
 */
export type RegistryErrorCode =
  /** Another agent already has this `canonical_id` (unique constraint). */
  | 'duplicate_canonical_id'
  /** An assigned permission set was deleted between validation and the write (foreign key). */
  | 'permission_set_missing';

/** A registry write refused by a database rule; `message` is safe to send as is. */
export class RegistryError extends Error {
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}
