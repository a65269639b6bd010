import { ApiError, RegistryError } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { inAdminVocabulary, registryApiError } from './registry-api-error';

describe('registryApiError', () => {
  it('answers a duplicate canonical_id as conflict and a vanished permission set as validation failed, message unchanged', () => {
    expect(registryApiError(new RegistryError('duplicate_canonical_id', 'canonical_id "x" is already used by another agent'))).toEqual(new ApiError('conflict', 'canonical_id "x" is already used by another agent'));
    const missing = registryApiError(new RegistryError('permission_set_missing', 'permission_sets: a referenced permission set no longer exists'));
    expect([missing.code, missing.message]).toEqual(['validation failed', 'permission_sets: a referenced permission set no longer exists']);
  });

  it('passes every other failure through untouched', async () => {
    const other = new Error('database down');
    await expect(inAdminVocabulary(Promise.reject(other))).rejects.toBe(other);
  });
});
