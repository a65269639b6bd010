import { ApiClient, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const UNKNOWN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('admin: permission sets', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  let mail: string;
  let files: string;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    admin = new ApiClient(broker.url('admin'));
    const create = async (name: string): Promise<string> =>
      (
        await admin.post('/api/services', {
          display_name: name,
          client_id: name,
          issuer_uri: 'https://idp.example.com',
          authorization_endpoint: 'https://idp.example.com/a',
          token_endpoint: 'https://idp.example.com/t',
          protected_resources: [`https://${name}.example.com`],
        })
      ).json<{ id: string }>().id;
    [mail, files] = [await create('mail'), await create('files')];
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('creates a permission set (201) with mandatory as the default requirement type', async () => {
    const response = await admin.post('/api/permission-sets', {
      name: 'Read mail',
      description: 'Read your mail',
      service_scopes: [{ service_id: mail, scopes: ['mail.read', 'mail.read'] }],
    });
    expect(response.status).toBe(201);
    const body = response.json<Record<string, unknown>>();
    expect(body).toMatchObject({
      name: 'Read mail',
      description: 'Read your mail',
      service_scopes: [{ service_id: mail, scopes: ['mail.read'], requirement_type: 'mandatory' }],
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
    expect(body.resource_scopes).toEqual([]);
    expect((await admin.get(`/api/permission-sets/${String(body.id)}`)).json()).toEqual(body);
  });

  it('takes description null as "none" (read back as "")', async () => {
    const response = await admin.post('/api/permission-sets', {
      name: 'No description',
      description: null,
      service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
    });
    expect(response.status).toBe(201);
    expect(response.json()).toMatchObject({ name: 'No description', description: '' });
    expect((await admin.delete(`/api/permission-sets/${response.json<{ id: string }>().id}`)).status).toBe(204);
  });

  it('lists as {items} and filters by service_id', async () => {
    await admin.post('/api/permission-sets', {
      name: 'Files and mail',
      service_scopes: [
        { service_id: files, scopes: ['files.read'], requirement_type: 'optional' },
        { service_id: mail, scopes: ['mail.send'], requirement_type: 'require_all_scopes' },
      ],
    });
    const all = (await admin.get('/api/permission-sets')).json<{ items: { name: string }[] }>();
    expect(Object.keys(all)).toEqual(['items']);
    expect(all.items.map((i) => i.name)).toEqual(['Read mail', 'Files and mail']);
    const filesOnly = (await admin.get(`/api/permission-sets?service_id=${files}`)).json<{
      items: { name: string }[];
    }>();
    expect(filesOnly.items.map((i) => i.name)).toEqual(['Files and mail']);
    expect((await admin.get(`/api/permission-sets?service_id=${UNKNOWN}`)).json()).toEqual({ items: [] });
    expect((await admin.get('/api/permission-sets?service_id=nope')).status).toBe(400);
  });

  it('replaces a set wholesale on PUT', async () => {
    const id = (
      await admin.post('/api/permission-sets', {
        name: 'To replace',
        service_scopes: [{ service_id: mail, scopes: ['a'] }],
      })
    ).json<{ id: string }>().id;
    const replaced = await admin.put(`/api/permission-sets/${id}`, {
      name: 'Replaced',
      service_scopes: [{ service_id: files, scopes: ['b'] }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json()).toMatchObject({
      id,
      name: 'Replaced',
      description: '',
      service_scopes: [{ service_id: files, scopes: ['b'], requirement_type: 'mandatory' }],
    });
  });

  it('refuses a duplicate name with 409 conflict (create and rename)', async () => {
    const duplicate = await admin.post('/api/permission-sets', {
      name: 'Read mail',
      service_scopes: [{ service_id: mail, scopes: ['x'] }],
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json()).toEqual({
      error: 'conflict',
      message: 'a permission set named "Read mail" already exists',
    });
    const other = (
      await admin.post('/api/permission-sets', { name: 'Other', service_scopes: [{ service_id: mail, scopes: ['x'] }] })
    ).json<{ id: string }>().id;
    expect(
      (
        await admin.put(`/api/permission-sets/${other}`, {
          name: 'Read mail',
          service_scopes: [{ service_id: mail, scopes: ['x'] }],
        })
      ).status,
    ).toBe(409);
  });

  it('deletes a set (204, then 404), and refuses while an agent is assigned it (409)', async () => {
    const loose = (
      await admin.post('/api/permission-sets', {
        name: 'Loose',
        service_scopes: [{ service_id: files, scopes: ['x'] }],
      })
    ).json<{ id: string }>().id;
    expect((await admin.delete(`/api/permission-sets/${loose}`)).status).toBe(204);
    const gone = await admin.get(`/api/permission-sets/${loose}`);
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ error: 'permission set not found', message: `no permission set ${loose}` });

    const assigned = (
      await admin.post('/api/permission-sets', {
        name: 'Assigned',
        service_scopes: [{ service_id: mail, scopes: ['x'] }],
      })
    ).json<{ id: string }>().id;
    const agent = await admin.post('/api/agents', {
      display_name: 'Uses it',
      permission_sets: [{ permission_set_id: assigned, requirement_type: 'optional' }],
    });
    expect(agent.json()).toMatchObject({
      permission_sets: [{ permission_set_id: assigned, requirement_type: 'optional' }],
    });
    const refused = await admin.delete(`/api/permission-sets/${assigned}`);
    expect(refused.status).toBe(409);
    expect(refused.json<{ error: string }>().error).toBe('conflict');
    // Once the agent is gone, the set can go.
    expect((await admin.delete(`/api/agents/${agent.json<{ id: string }>().id}`)).status).toBe(204);
    expect((await admin.delete(`/api/permission-sets/${assigned}`)).status).toBe(204);
  });

  it('answers 404 for unknown ids on GET, PUT and DELETE', async () => {
    for (const response of [
      await admin.get(`/api/permission-sets/${UNKNOWN}`),
      await admin.put(`/api/permission-sets/${UNKNOWN}`, {
        name: 'n',
        service_scopes: [{ service_id: mail, scopes: ['x'] }],
      }),
      await admin.delete(`/api/permission-sets/${UNKNOWN}`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.json<{ error: string }>().error).toBe('permission set not found');
    }
  });

  describe('validation', () => {
    const cases: [string, () => Record<string, unknown>, string, string][] = [
      ['missing name', () => ({ service_scopes: [] }), 'invalid request body', 'name'],
      // A set covers at least one service or protected resource (docs/admin-api.md "Protected resources (MCP servers)").
      [
        'missing service_scopes (and no resource_scopes)',
        () => ({ name: 'n1' }),
        'validation failed',
        'service_scopes',
      ],
      [
        'empty service_scopes (and no resource_scopes)',
        () => ({ name: 'n1b', service_scopes: [] }),
        'validation failed',
        'service_scopes',
      ],
      [
        'unknown service',
        () => ({ name: 'n2', service_scopes: [{ service_id: UNKNOWN, scopes: ['a'] }] }),
        'validation failed',
        UNKNOWN,
      ],
      [
        'malformed service id',
        () => ({ name: 'n3', service_scopes: [{ service_id: 'x', scopes: ['a'] }] }),
        'validation failed',
        'service_id',
      ],
      [
        'empty scope string',
        () => ({ name: 'n4', service_scopes: [{ service_id: mail, scopes: [''] }] }),
        'validation failed',
        'scopes',
      ],
      [
        'bad requirement type',
        () => ({ name: 'n5', service_scopes: [{ service_id: mail, scopes: ['a'], requirement_type: 'maybe' }] }),
        'validation failed',
        'requirement_type',
      ],
      [
        'the same service twice',
        () => ({
          name: 'n6',
          service_scopes: [
            { service_id: mail, scopes: ['a'] },
            { service_id: mail, scopes: ['b'] },
          ],
        }),
        'validation failed',
        'service_scopes',
      ],
      // Lists and enumerations may be omitted where optional, but null is not "omitted" (the document does not allow it).
      [
        'null requirement type',
        () => ({ name: 'n7', service_scopes: [{ service_id: mail, scopes: ['a'], requirement_type: null }] }),
        'validation failed',
        'requirement_type',
      ],
      [
        'null scopes',
        () => ({ name: 'n8', service_scopes: [{ service_id: mail, scopes: null }] }),
        'invalid request body',
        'scopes',
      ],
      ['null service_scopes', () => ({ name: 'n9', service_scopes: null }), 'invalid request body', 'service_scopes'],
    ];
    for (const [name, body, error, field] of cases) {
      it(`rejects ${name} with 400 ${error}`, async () => {
        const response = await admin.post('/api/permission-sets', body());
        expect(response.status).toBe(400);
        const payload = response.json<{ error: string; message: string }>();
        expect(payload.error).toBe(error);
        expect(payload.message).toContain(field);
      });
    }
  });
});
