/**
 * Why the registry (agents, services, permission sets and their links) refused a write. The
 * repository names the rule; the admin API alone chooses the wire code and status (error
 * codes are chosen only at the edge: docs/architecture.md, "Errors").
 */
export type RegistryErrorCode =
  /** Another agent already has this `canonical_id` (unique constraint). */
  | 'duplicate_canonical_id'
  /** An assigned permission set was deleted between validation and the write (foreign key). */
  | 'permission_set_missing'
  /** A protected resource URI already belongs to another service (the URI is the row's primary key). */
  | 'resource_owned_by_other_service'
  /** A permission set or a grant still references the service being deleted (foreign key). */
  | 'service_in_use'
  /** Another permission set already has this name (unique constraint). */
  | 'duplicate_permission_set_name'
  /** A service the permission set covers was deleted between validation and the write (foreign key). */
  | 'service_missing'
  /** An agent or a grant still references the permission set being deleted (foreign key). */
  | 'permission_set_in_use'
  /** Another protected resource already has this `resource_uri` (unique constraint). */
  | 'duplicate_resource_uri'
  /** A URI is both a service's protected resource and a registered protected resource. */
  | 'resource_uri_of_other_kind'
  /** A permission set or a grant still references the protected resource being deleted (foreign key). */
  | 'resource_in_use'
  /** A replacement drops a scope of the protected resource that a permission set still names. */
  | 'resource_scope_in_use'
  /** A protected resource the permission set covers was deleted between validation and the write (foreign key). */
  | 'resource_missing'
  /** A permission set names a scope its protected resource no longer offers (changed between validation and the write). */
  | 'resource_scope_not_offered';

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
