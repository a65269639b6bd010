import { ApiError, RegistryError } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { ADMIN_ERROR_VOCABULARY } from './error-vocabulary';

/** The admin API's answer to a registry refusal. */
function registryApiError(error: RegistryError): ApiError {
  return ADMIN_ERROR_VOCABULARY.translate(error) as ApiError;
}

describe('the admin API vocabulary of registry refusals', () => {
  it('answers a duplicate canonical_id as conflict and a vanished permission set as validation failed, message unchanged', () => {
    expect(
      registryApiError(
        new RegistryError('duplicate_canonical_id', 'canonical_id "x" is already used by another agent'),
      ),
    ).toEqual(new ApiError('conflict', 'canonical_id "x" is already used by another agent'));
    const missing = registryApiError(
      new RegistryError('permission_set_missing', 'permission_sets: a referenced permission set no longer exists'),
    );
    expect([missing.code, missing.message]).toEqual([
      'validation failed',
      'permission_sets: a referenced permission set no longer exists',
    ]);
  });

  it.each([
    [
      'resource_owned_by_other_service',
      'protected resource https://owned.example.com/data already belongs to another service',
    ],
    ['service_in_use', 'the service is referenced by a permission set or a grant: remove it from them first'],
    ['duplicate_permission_set_name', 'a permission set named "Read mail" already exists'],
    [
      'permission_set_in_use',
      'the permission set is assigned to an agent or delegated by a grant: remove it there first',
    ],
    ['duplicate_resource_uri', 'another protected resource already has resource_uri https://mcp.example.com/mcp'],
    [
      'resource_uri_of_other_kind',
      'resource_uri https://mcp.example.com is a protected resource of the service "Mail"',
    ],
    [
      'resource_in_use',
      'the protected resource is named by a permission set or delegated by a grant: remove it there first',
    ],
    [
      'resource_scope_in_use',
      'scopes: files.read still named by the permission set(s) "Files": remove them there first',
    ],
  ] as const)('answers %s as conflict (409), message unchanged', (code, message) => {
    const answer = registryApiError(new RegistryError(code, message));
    expect(answer).toBeInstanceOf(ApiError);
    expect([answer.code, answer.message]).toEqual(['conflict', message]);
  });

  it('answers a service deleted under a permission set write (service_missing) as validation failed, message unchanged', () => {
    const answer = registryApiError(
      new RegistryError('service_missing', 'service_scopes: a referenced service no longer exists'),
    );
    expect(answer).toBeInstanceOf(ApiError);
    expect([answer.code, answer.message]).toEqual([
      'validation failed',
      'service_scopes: a referenced service no longer exists',
    ]);
  });

  it.each([
    ['resource_missing', 'resource_scopes: a referenced protected resource no longer exists'],
    [
      'resource_scope_not_offered',
      'resource_scopes: the protected resource 3f2504e0-4f89-41d3-9a0c-0305e82c3301 does not offer files.write',
    ],
  ] as const)(
    'answers %s (changed under a permission set write) as validation failed, message unchanged',
    (code, message) => {
      const answer = registryApiError(new RegistryError(code, message));
      expect([answer.code, answer.message]).toEqual(['validation failed', message]);
    },
  );

  it('turns a registry refusal into the admin API error', () => {
    const refused = registryApiError(
      new RegistryError(
        'service_in_use',
        'the service is referenced by a permission set or a grant: remove it from them first',
      ),
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      code: 'conflict',
      message: 'the service is referenced by a permission set or a grant: remove it from them first',
    });
  });

  it('passes every other failure through untouched', () => {
    const other = new Error('database down');
    expect(ADMIN_ERROR_VOCABULARY.translate(other)).toBe(other);
  });
});
