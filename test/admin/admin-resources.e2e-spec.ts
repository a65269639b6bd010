import { ApiClient, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const UNKNOWN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const ADMIN = 'resources-admin@example.com';

let counter = 0;
function resource(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    display_name: `Files MCP ${counter}`,
    resource_uri: `https://mcp${counter}.example.com/mcp`,
    scopes: [
      { scope: 'files.read', description: 'Read your files' },
      { scope: 'files.write', description: 'Change your files' },
    ],
    ...overrides,
  };
}

function service(protectedResources: string[]): Record<string, unknown> {
  counter += 1;
  return {
    display_name: `Service ${counter}`,
    client_id: `client-${counter}`,
    issuer_uri: 'https://idp.example.com',
    authorization_endpoint: 'https://idp.example.com/a',
    token_endpoint: 'https://idp.example.com/t',
    protected_resources: protectedResources,
  };
}

interface ResourceBody {
  id: string;
  display_name: string;
  description: string | null;
  logo_url: string | null;
  resource_uri: string;
  scopes: { scope: string; description: string }[];
  created_at: string;
  updated_at: string;
}

describe.each(testBackends())('admin: protected resources on $name', (backend) => {
  let broker: TestBroker;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { storage: await backend.storage() } });
    admin = new ApiClient(broker.url('admin'), ADMIN);
  });

  afterAll(async () => {
    await broker.stop();
  });

  const create = async (overrides: Record<string, unknown> = {}): Promise<ResourceBody> => {
    const response = await admin.post('/api/resources', resource(overrides));
    expect(response.status, response.text).toBe(201);
    return response.json<ResourceBody>();
  };

  it('registers a resource (201), reads it back, and lists resources as {items}, oldest first', async () => {
    const response = await admin.post(
      '/api/resources',
      resource({
        display_name: 'Drive',
        description: 'Your files, for agents',
        logo_url: 'https://cdn.example.com/drive.png',
        resource_uri: 'https://drive.example.com/mcp/',
      }),
    );
    expect(response.status).toBe(201);
    const body = response.json<ResourceBody>();
    expect(body).toMatchObject({
      display_name: 'Drive',
      description: 'Your files, for agents',
      logo_url: 'https://cdn.example.com/drive.png',
      // Stored as given (RFC 8707 §2: tokens carry it as `aud`, compared exactly): the trailing slash stays.
      resource_uri: 'https://drive.example.com/mcp/',
      scopes: [
        { scope: 'files.read', description: 'Read your files' },
        { scope: 'files.write', description: 'Change your files' },
      ],
    });
    expect(Object.keys(body).sort()).toEqual([
      'created_at',
      'description',
      'display_name',
      'id',
      'logo_url',
      'resource_uri',
      'scopes',
      'updated_at',
    ]);
    expect((await admin.get(`/api/resources/${body.id}`)).json()).toEqual(body);

    const second = await create({ scopes: [] });
    expect(second).toMatchObject({ description: null, logo_url: null, scopes: [] });
    const list = (await admin.get('/api/resources')).json<{ items: ResourceBody[] }>();
    expect(Object.keys(list)).toEqual(['items']);
    const ids = list.items.map((item) => item.id);
    expect(ids.indexOf(body.id)).toBeLessThan(ids.indexOf(second.id));
    expect(list.items.find((item) => item.id === body.id)).toEqual(body);
  });

  it('takes http only on a loopback host', async () => {
    for (const uri of ['http://127.0.0.1:8931/mcp', 'http://localhost:3000/mcp', 'http://[::1]:8080/']) {
      expect((await admin.post('/api/resources', resource({ resource_uri: uri }))).status, uri).toBe(201);
    }
  });

  it('replaces a resource wholesale on PUT (200): omitted optional fields become null', async () => {
    const created = await create({ description: 'before', logo_url: 'https://cdn.example.com/a.png' });
    const replaced = await admin.put(`/api/resources/${created.id}`, {
      display_name: 'Renamed',
      resource_uri: created.resource_uri,
      scopes: [...created.scopes, { scope: 'files.share', description: 'Share your files' }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json()).toMatchObject({
      id: created.id,
      display_name: 'Renamed',
      description: null,
      logo_url: null,
      resource_uri: created.resource_uri,
      created_at: created.created_at,
    });
    expect(replaced.json<ResourceBody>().scopes.map((s) => s.scope)).toEqual([
      'files.read',
      'files.write',
      'files.share',
    ]);
    expect((await admin.get(`/api/resources/${created.id}`)).json()).toEqual(replaced.json());
  });

  it('deletes a resource (204, then 404)', async () => {
    const created = await create();
    expect((await admin.delete(`/api/resources/${created.id}`)).status).toBe(204);
    const gone = await admin.get(`/api/resources/${created.id}`);
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ error: 'resource not found', message: `no resource ${created.id}` });
  });

  it('answers 404 for unknown ids on GET, PUT and DELETE, and 400 for a malformed one', async () => {
    for (const response of [
      await admin.get(`/api/resources/${UNKNOWN}`),
      await admin.put(`/api/resources/${UNKNOWN}`, resource()),
      await admin.delete(`/api/resources/${UNKNOWN}`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.json()).toEqual({ error: 'resource not found', message: `no resource ${UNKNOWN}` });
    }
    const malformed = await admin.get('/api/resources/nope');
    expect(malformed.status).toBe(400);
    expect(malformed.json<{ error: string }>().error).toBe('invalid request');
  });

  it('refuses a resource_uri another resource has with 409 conflict (create and PUT)', async () => {
    const taken = await create();
    const duplicate = await admin.post('/api/resources', resource({ resource_uri: taken.resource_uri }));
    expect(duplicate.status).toBe(409);
    expect(duplicate.json()).toEqual({
      error: 'conflict',
      message: `another protected resource already has resource_uri ${taken.resource_uri}`,
    });
    const other = await create();
    expect((await admin.put(`/api/resources/${other.id}`, resource({ resource_uri: taken.resource_uri }))).status).toBe(
      409,
    );
  });

  it("refuses a URI a service lists in protected_resources, and a service listing a registered resource's URI, with 409 conflict", async () => {
    const owned = `https://owned${counter}.example.com/api`;
    expect((await admin.post('/api/services', service([owned]))).status).toBe(201);
    const refused = await admin.post('/api/resources', resource({ resource_uri: owned }));
    expect(refused.status).toBe(409);
    const message = refused.json<{ error: string; message: string }>();
    expect(message.error).toBe('conflict');
    expect(message.message).toContain(owned);
    expect(message.message).toContain(
      'a URI is either a third-party API the broker exchanges tokens for (a service) or a resource the broker issues tokens for (a protected resource)',
    );

    const registered = await create();
    const serviceRefused = await admin.post('/api/services', service([registered.resource_uri]));
    expect(serviceRefused.status).toBe(409);
    expect(serviceRefused.json<{ error: string; message: string }>()).toMatchObject({
      error: 'conflict',
      message: expect.stringContaining(registered.display_name) as unknown,
    });
    const existing = (await admin.post('/api/services', service([`https://free${counter}.example.com`]))).json<{
      id: string;
    }>().id;
    expect((await admin.put(`/api/services/${existing}`, service([registered.resource_uri]))).status).toBe(409);
  });

  it('refuses to delete a resource a permission set names (409), and a PUT dropping a scope a set names (409, naming the set)', async () => {
    const used = await create();
    const set = await admin.post('/api/permission-sets', {
      name: `Files ${used.id}`,
      resource_scopes: [{ resource_id: used.id, scopes: ['files.write'] }],
    });
    expect(set.status, set.text).toBe(201);

    const deleteRefused = await admin.delete(`/api/resources/${used.id}`);
    expect(deleteRefused.status).toBe(409);
    expect(deleteRefused.json<{ error: string }>().error).toBe('conflict');

    const dropRefused = await admin.put(`/api/resources/${used.id}`, {
      display_name: used.display_name,
      resource_uri: used.resource_uri,
      scopes: [{ scope: 'files.read', description: 'Read your files' }],
    });
    expect(dropRefused.status).toBe(409);
    expect(dropRefused.json()).toEqual({
      error: 'conflict',
      message: `scopes: files.write still named by the permission set(s) "Files ${used.id}": remove them there first`,
    });
    // Dropping a scope no set names is fine.
    const dropped = await admin.put(`/api/resources/${used.id}`, {
      display_name: used.display_name,
      resource_uri: used.resource_uri,
      scopes: [{ scope: 'files.write', description: 'Change your files' }],
    });
    expect(dropped.status).toBe(200);

    expect((await admin.delete(`/api/permission-sets/${set.json<{ id: string }>().id}`)).status).toBe(204);
    expect((await admin.delete(`/api/resources/${used.id}`)).status).toBe(204);
  });

  it('refuses to delete a resource an active grant delegates (409), and releases the references of expired grants first (204)', async () => {
    const query = <T>(sql: string, parameters: unknown[]): Promise<T> =>
      broker.broker.runtime.database.dataSource.query<T>(sql, parameters);
    const delegated = await create();
    const mail = (await admin.post('/api/services', service([`https://delegating${counter}.example.com`]))).json<{
      id: string;
    }>().id;
    // The set once named the resource; the grant keeps what was consented (its own rows), whatever the set says now.
    const set = (
      await admin.post('/api/permission-sets', {
        name: `Delegating ${delegated.id}`,
        service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const agent = (
      await admin.post('/api/agents', { display_name: 'Delegate', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    const grant = '0b7e2f7c-2a8f-4d5e-9a51-3c1f6f0a9e01';
    await query(
      "INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, 'alice@example.com', $2, $3, now(), now())",
      [grant, agent, '2099-01-01T00:00:00Z'],
    );
    await query(
      'INSERT INTO grant_resources (grant_id, permission_set_id, resource_id, scopes, position) VALUES ($1, $2, $3, \'["files.read"]\', 0)',
      [grant, set, delegated.id],
    );

    const refused = await admin.delete(`/api/resources/${delegated.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json()).toEqual({
      error: 'conflict',
      message: 'the protected resource is named by a permission set or delegated by a grant: remove it there first',
    });

    await query('UPDATE grants SET valid_until = $2 WHERE id = $1', [grant, '2000-01-01T00:00:00Z']);
    expect((await admin.delete(`/api/resources/${delegated.id}`)).status).toBe(204);
  });

  it('records resource.created, .changed and .deleted by the admin, with identifiers and names only', async () => {
    const created = await create({ display_name: 'Evented' });
    await admin.put(`/api/resources/${created.id}`, {
      display_name: 'Evented 2',
      resource_uri: created.resource_uri,
      scopes: [],
    });
    await admin.delete(`/api/resources/${created.id}`);
    const latest = async (
      type: string,
    ): Promise<{ actor: unknown; details: unknown; agent_id: unknown; service_id: unknown } | undefined> =>
      (await admin.get(`/api/events?type=${type}`))
        .json<{
          items: { actor: unknown; details: { resource_id?: string }; agent_id: unknown; service_id: unknown }[];
        }>()
        .items.find((item) => item.details.resource_id === created.id);
    const byAdmin = { actor: { type: 'admin', id: ADMIN }, agent_id: null, service_id: null };
    expect(await latest('resource.created')).toMatchObject({
      ...byAdmin,
      details: { resource_id: created.id, display_name: 'Evented', resource_uri: created.resource_uri },
    });
    expect(await latest('resource.changed')).toMatchObject({
      ...byAdmin,
      details: { resource_id: created.id, display_name: 'Evented 2', resource_uri: created.resource_uri },
    });
    expect(await latest('resource.deleted')).toMatchObject({ ...byAdmin, details: { resource_id: created.id } });
  });

  describe('permission sets with resource scopes', () => {
    let files: ResourceBody;
    let mail: string;

    beforeAll(async () => {
      files = await create();
      mail = (await admin.post('/api/services', service([`https://mail${counter}.example.com`]))).json<{ id: string }>()
        .id;
    });

    it('round-trips resource_scopes beside service_scopes (both always in the response), and lists by resource_id', async () => {
      const response = await admin.post('/api/permission-sets', {
        name: `Both ${files.id}`,
        service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
        resource_scopes: [
          { resource_id: files.id, scopes: ['files.read', 'files.read', 'files.write'], requirement_type: 'optional' },
        ],
      });
      expect(response.status, response.text).toBe(201);
      const body = response.json<{ id: string }>();
      expect(body).toMatchObject({
        service_scopes: [{ service_id: mail, scopes: ['mail.read'], requirement_type: 'mandatory' }],
        resource_scopes: [
          { resource_id: files.id, scopes: ['files.read', 'files.write'], requirement_type: 'optional' },
        ],
      });
      expect(Object.keys(body).sort()).toEqual([
        'created_at',
        'description',
        'id',
        'name',
        'resource_scopes',
        'service_scopes',
        'updated_at',
      ]);
      expect((await admin.get(`/api/permission-sets/${body.id}`)).json()).toEqual(body);

      const onlyResource = (
        await admin.post('/api/permission-sets', {
          name: `Only ${files.id}`,
          resource_scopes: [{ resource_id: files.id, scopes: ['files.read'] }],
        })
      ).json<{ id: string }>();
      expect(onlyResource).toMatchObject({
        service_scopes: [],
        resource_scopes: [{ resource_id: files.id, scopes: ['files.read'], requirement_type: 'mandatory' }],
      });
      const onlyService = (
        await admin.post('/api/permission-sets', {
          name: `Service only ${files.id}`,
          service_scopes: [{ service_id: mail, scopes: ['mail.send'] }],
        })
      ).json<{ id: string }>();
      expect(onlyService).toMatchObject({ resource_scopes: [] });

      const covering = (await admin.get(`/api/permission-sets?resource_id=${files.id}`)).json<{
        items: { id: string }[];
      }>();
      expect(covering.items.map((item) => item.id)).toEqual([body.id, onlyResource.id]);
      expect((await admin.get(`/api/permission-sets?resource_id=${UNKNOWN}`)).json()).toEqual({ items: [] });
      expect((await admin.get('/api/permission-sets?resource_id=nope')).status).toBe(400);
      expect(
        (await admin.get(`/api/permission-sets?resource_id=${files.id}&service_id=${mail}`))
          .json<{ items: { id: string }[] }>()
          .items.map((item) => item.id),
      ).toEqual([body.id]);

      const replaced = await admin.put(`/api/permission-sets/${onlyResource.id}`, {
        name: `Only ${files.id}`,
        resource_scopes: [{ resource_id: files.id, scopes: ['files.write'], requirement_type: 'require_all_scopes' }],
      });
      expect(replaced.status).toBe(200);
      expect(replaced.json()).toMatchObject({
        resource_scopes: [{ resource_id: files.id, scopes: ['files.write'], requirement_type: 'require_all_scopes' }],
      });
    });

    const cases: [string, () => Record<string, unknown>, string, string][] = [
      ['neither service_scopes nor resource_scopes', () => ({ name: 'v1' }), 'validation failed', 'resource_scopes'],
      [
        'both empty',
        () => ({ name: 'v2', service_scopes: [], resource_scopes: [] }),
        'validation failed',
        'resource_scopes',
      ],
      [
        'an unknown resource',
        () => ({ name: 'v3', resource_scopes: [{ resource_id: UNKNOWN, scopes: ['files.read'] }] }),
        'validation failed',
        `no resource ${UNKNOWN}`,
      ],
      [
        'a malformed resource id',
        () => ({ name: 'v4', resource_scopes: [{ resource_id: 'x', scopes: ['files.read'] }] }),
        'validation failed',
        'resource_id',
      ],
      [
        'the same resource twice',
        () => ({
          name: 'v5',
          resource_scopes: [
            { resource_id: files.id, scopes: ['files.read'] },
            { resource_id: files.id, scopes: ['files.write'] },
          ],
        }),
        'validation failed',
        'resource_scopes',
      ],
      [
        'no scopes for a resource',
        () => ({ name: 'v6', resource_scopes: [{ resource_id: files.id, scopes: [] }] }),
        'validation failed',
        'scopes',
      ],
      [
        'a scope the resource does not offer',
        () => ({ name: 'v7', resource_scopes: [{ resource_id: files.id, scopes: ['files.read', 'files.admin'] }] }),
        'validation failed',
        'files.admin',
      ],
      [
        'a bad requirement type',
        () => ({
          name: 'v8',
          resource_scopes: [{ resource_id: files.id, scopes: ['files.read'], requirement_type: 'maybe' }],
        }),
        'validation failed',
        'requirement_type',
      ],
      [
        'null resource_scopes',
        () => ({ name: 'v9', service_scopes: [{ service_id: mail, scopes: ['a'] }], resource_scopes: null }),
        'invalid request body',
        'resource_scopes',
      ],
    ];
    for (const [name, body, error, mentioned] of cases) {
      it(`refuses a permission set with ${name}: 400 ${error}`, async () => {
        const response = await admin.post('/api/permission-sets', body());
        expect(response.status, response.text).toBe(400);
        const payload = response.json<{ error: string; message: string }>();
        expect(payload.error).toBe(error);
        expect(payload.message).toContain(mentioned);
      });
    }
  });

  describe('validation', () => {
    const long = `https://mcp.example.com/${'a'.repeat(2048)}`;
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['missing display_name', { display_name: undefined }, 'invalid request body', 'display_name'],
      ['empty display_name', { display_name: '' }, 'validation failed', 'display_name'],
      ['a display_name over 255 characters', { display_name: 'x'.repeat(256) }, 'validation failed', 'display_name'],
      [
        'an http logo_url off loopback',
        { logo_url: 'http://cdn.example.com/logo.png' },
        'validation failed',
        'logo_url',
      ],
      ['a javascript: logo_url', { logo_url: 'javascript:alert(1)' }, 'validation failed', 'logo_url'],
      ['missing resource_uri', { resource_uri: undefined }, 'invalid request body', 'resource_uri'],
      ['a relative resource_uri', { resource_uri: '/mcp' }, 'validation failed', 'resource_uri'],
      [
        'an http resource_uri off loopback',
        { resource_uri: 'http://mcp.example.com/mcp' },
        'validation failed',
        'resource_uri',
      ],
      ['a non-http resource_uri', { resource_uri: 'urn:example:mcp' }, 'validation failed', 'resource_uri'],
      [
        'a resource_uri with a fragment',
        { resource_uri: 'https://mcp.example.com/mcp#x' },
        'validation failed',
        'resource_uri',
      ],
      [
        'a resource_uri with user info',
        { resource_uri: 'https://user:pw@mcp.example.com/mcp' },
        'validation failed',
        'resource_uri',
      ],
      [
        'a resource_uri with a dot segment',
        { resource_uri: 'https://mcp.example.com/a/../mcp' },
        'validation failed',
        'resource_uri',
      ],
      [
        'a resource_uri with an encoded dot segment',
        { resource_uri: 'https://mcp.example.com/a/%2e%2e/mcp' },
        'validation failed',
        'resource_uri',
      ],
      [
        'a resource_uri with a space',
        { resource_uri: 'https://mcp.example.com/m cp' },
        'validation failed',
        'resource_uri',
      ],
      ['a resource_uri over 2048 characters', { resource_uri: long }, 'validation failed', 'resource_uri'],
      ['missing scopes', { scopes: undefined }, 'invalid request body', 'scopes'],
      ['a scope with a space', { scopes: [{ scope: 'files read', description: 'x' }] }, 'validation failed', 'scope'],
      [
        'a scope with a backslash',
        { scopes: [{ scope: 'files\\read', description: 'x' }] },
        'validation failed',
        'scope',
      ],
      [
        'the scope offline_access',
        { scopes: [{ scope: 'offline_access', description: 'x' }] },
        'validation failed',
        'offline_access',
      ],
      ['the scope openid', { scopes: [{ scope: 'openid', description: 'x' }] }, 'validation failed', 'openid'],
      [
        'a scope listed twice',
        {
          scopes: [
            { scope: 'a', description: 'x' },
            { scope: 'a', description: 'y' },
          ],
        },
        'validation failed',
        'scopes',
      ],
      ['a scope without description', { scopes: [{ scope: 'a' }] }, 'invalid request body', 'description'],
      [
        'a scope with an empty description',
        { scopes: [{ scope: 'a', description: '' }] },
        'validation failed',
        'description',
      ],
      [
        'over 100 scopes',
        { scopes: Array.from({ length: 101 }, (_, i) => ({ scope: `s${i}`, description: 'x' })) },
        'validation failed',
        'scopes',
      ],
    ];
    for (const [name, overrides, error, field] of cases) {
      it(`rejects ${name} with 400 ${error}`, async () => {
        const body = resource(overrides);
        for (const key of Object.keys(overrides)) if (overrides[key] === undefined) delete body[key];
        const response = await admin.post('/api/resources', body);
        expect(response.status, response.text).toBe(400);
        const payload = response.json<{ error: string; message: string }>();
        expect(payload.error).toBe(error);
        expect(payload.message).toContain(field);
      });
    }
  });
});

describe('admin: protected resources within resource_indicators.allowed_resources', () => {
  let broker: TestBroker;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        oauth2_authorization_server: {
          local: {
            resource_indicators: { allowed_resources: ['https://mcp.example.com/', 'https://exact.example.com/mcp'] },
          },
        },
      },
    });
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('takes a URI the list matches (exact, or under a prefix ending in /) and refuses any other with 400 validation failed naming the key', async () => {
    expect(
      (await admin.post('/api/resources', resource({ resource_uri: 'https://exact.example.com/mcp' }))).status,
    ).toBe(201);
    expect(
      (await admin.post('/api/resources', resource({ resource_uri: 'https://mcp.example.com/files' }))).status,
    ).toBe(201);
    for (const uri of [
      'https://exact.example.com/mcp/',
      'https://other.example.com/mcp',
      'https://mcp.example.com.evil.example/x',
    ]) {
      const response = await admin.post('/api/resources', resource({ resource_uri: uri }));
      expect(response.status, uri).toBe(400);
      expect(response.json<{ error: string; message: string }>()).toMatchObject({
        error: 'validation failed',
        message: expect.stringContaining(
          'oauth2_authorization_server.local.resource_indicators.allowed_resources',
        ) as unknown,
      });
    }
  });
});
