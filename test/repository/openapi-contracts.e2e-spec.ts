import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface OpenApiDocument {
  info: { version: string };
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

/** `npm test` builds first; the build writes both contracts. */
const read = (file: string): OpenApiDocument => JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;

describe('generated OpenAPI contracts', () => {
  it('document every admin route with its methods', () => {
    const admin = read('openapi/admin-api.json');
    const methods = Object.fromEntries(
      Object.entries(admin.paths).map(([path, item]) => [path, Object.keys(item).sort()]),
    );
    expect(methods).toMatchObject({
      '/api/agents': ['get', 'post'],
      '/api/agents/{agentId}': ['delete', 'get', 'put'],
      '/api/services': ['get', 'post'],
      '/api/services/{serviceId}': ['delete', 'get', 'put'],
      '/api/permission-sets': ['get', 'post'],
      '/api/permission-sets/{permissionSetId}': ['delete', 'get', 'put'],
      '/api/agents/{agentId}/client-credentials': ['delete', 'get', 'post'],
      '/api/oauth2-server/signing-keys': ['get', 'post'],
      '/api/oauth2-server/signing-keys/{kid}/current': ['put'],
      '/api/oauth2-server/signing-keys/{kid}': ['delete'],
      '/health': ['get'],
    });
  });

  it('describe request and response bodies from the DTOs', () => {
    const { components } = read('openapi/admin-api.json');
    expect(Object.keys(components.schemas.AgentDto?.properties ?? {})).toEqual(
      expect.arrayContaining(['display_name', 'canonical_id', 'redirect_uris', 'permission_sets']),
    );
    expect(Object.keys(components.schemas.ServiceResponse?.properties ?? {})).toEqual(
      expect.arrayContaining(['client_secret', 'protected_resources', 'token_endpoint_auth_method']),
    );
    expect(Object.keys(components.schemas.PermissionSetListResponse?.properties ?? {})).toEqual(['items']);
  });

  it('version the end-user contract 1.0.0', () => {
    expect(read('openapi/user-api.json').info.version).toBe('1.0.0');
  });
});
