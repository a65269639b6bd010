import { describe, expect, it } from 'vitest';
import {
  permissionSetBody,
  permissionSetForm,
  permissionSetProblemWords,
  type PermissionSet,
} from './permission-set-form';

const SET: PermissionSet = {
  id: 'b1b2c3d4-0000-4000-8000-000000000001',
  name: 'Calendar',
  description: '',
  service_scopes: [{ service_id: 'c1', scopes: ['calendar.read', 'legacy.scope'], requirement_type: 'optional' }],
  resource_scopes: [{ resource_id: 'r1', scopes: ['files.read'], requirement_type: 'mandatory' }],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

describe('the permission set form', () => {
  it('sends a stored set back as it was, scopes the service no longer lists included', () => {
    const form = permissionSetForm(SET, () => ['calendar.read']);
    expect(form.services[0]?.other).toBe('legacy.scope');
    expect(permissionSetBody(form)).toEqual({
      name: 'Calendar',
      description: null,
      service_scopes: [{ service_id: 'c1', scopes: ['calendar.read', 'legacy.scope'], requirement_type: 'optional' }],
      resource_scopes: [{ resource_id: 'r1', scopes: ['files.read'], requirement_type: 'mandatory' }],
    });
  });

  it('says what to do about the API rules', () => {
    expect(permissionSetProblemWords('service_scopes.0.service_id', 'service_id must be a UUID')).toBe(
      'Choose a service.',
    );
    expect(permissionSetProblemWords('resource_scopes', 'required when service_scopes is empty')).toMatch(
      /covers at least one service or MCP server/,
    );
    expect(permissionSetProblemWords('resource_scopes.0.scopes', 'resource r1 does not offer files.delete')).toMatch(
      /does not offer files.delete/,
    );
  });
});
