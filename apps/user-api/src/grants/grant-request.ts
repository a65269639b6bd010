import { ApiError, isCanonicalUuid, isUuidShaped, parseRfc3339DateTime } from '@broker/domain';

/** A parsed grant request: permission set id → the ids (lower-case) of its services and protected resources delegated, or empty to delete. */
export type RequestedDelegation = ReadonlyMap<string, readonly string[]>;

function invalid(message: string, field: string): ApiError {
  return new ApiError('invalid request', message, [{ field, problem: message }]);
}

function uuid(value: unknown, field: string): string {
  if (typeof value !== 'string' || !isUuidShaped(value)) throw invalid(`${field} must be a UUID`, field);
  const lower = value.toLowerCase();
  return isCanonicalUuid(lower) ? lower : value;
}

/**
 * `granted_permission_sets`: an object of permission-set id → non-empty array of the ids of
 * its services and protected resources, or `{}` / `[]` (delete). Anything else is 400 `invalid request` naming the field.
 */
export function parseGrantedPermissionSets(value: unknown): RequestedDelegation {
  if (Array.isArray(value)) {
    if (value.length === 0) return new Map();
    throw invalid(
      'granted_permission_sets must be an object of permission-set id to service ids (an empty array deletes the grant)',
      'granted_permission_sets',
    );
  }
  if (value === null || typeof value !== 'object')
    throw invalid(
      'granted_permission_sets must be an object of permission-set id to service ids',
      'granted_permission_sets',
    );
  const out = new Map<string, string[]>();
  for (const [key, services] of Object.entries(value)) {
    const setId = uuid(key, `granted_permission_sets key ${key}`);
    const field = `granted_permission_sets.${key}`;
    if (!Array.isArray(services) || services.length === 0)
      throw invalid(`${field} must be a non-empty array of service ids`, field);
    out.set(setId, [...new Set(services.map((service, index) => uuid(service, `${field}.${index}`)))]);
  }
  return out;
}

/**
 * `valid_until`: RFC 3339 with a time zone, a real calendar date and time (`2030-02-30` is
 * refused, not read as 2 March), strictly in the future; null or omitted: indefinite.
 */
export function parseValidUntil(value: string | null | undefined, now: Date): Date | null {
  if (value === undefined || value === null) return null;
  const time = parseRfc3339DateTime(value);
  if (time === undefined)
    throw invalid(
      'valid_until must be an RFC 3339 date-time with a time zone on a real calendar date, e.g. 2030-01-01T00:00:00Z',
      'valid_until',
    );
  if (time.getTime() <= now.getTime()) throw invalid('valid_until must be in the future', 'valid_until');
  return time;
}
