import { ApiError, assertNever, RegistryError } from '@broker/domain';

/**
 * The admin API's one mapping of registry refusals to its wire codes (codes are
 * chosen at the edge: docs/architecture.md, "Errors"). Messages pass through unchanged: docs/admin-api.md
 * states them, and they name only what the admin sent.
 */
export function registryApiError(error: RegistryError): ApiError {
  switch (error.code) {
    // 409: the write collides with, or is still needed by, another registry row.
    case 'duplicate_canonical_id':
    case 'resource_owned_by_other_service':
    case 'service_in_use':
    case 'duplicate_permission_set_name':
    case 'permission_set_in_use':
    case 'duplicate_resource_uri':
    case 'resource_uri_of_other_kind':
    case 'resource_in_use':
    case 'resource_scope_in_use':
      return new ApiError('conflict', error.message);
    // 400: a reference the admin sent vanished between validation and the write.
    case 'permission_set_missing':
    case 'service_missing':
    case 'resource_missing':
    case 'resource_scope_not_offered':
      return new ApiError('validation failed', error.message);
    default:
      return assertNever(error.code, 'registry error code');
  }
}

/** Runs a registry write, answering its refusals in the admin API's vocabulary. */
export async function inAdminVocabulary<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw error instanceof RegistryError ? registryApiError(error) : error;
  }
}
