import { ApiClient, http, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const AGENT = {
  display_name: 'Calendar Agent',
  description: 'Schedules meetings',
  canonical_id: 'calendar-agent',
  client_id: 'upstream-calendar',
  logo_url: 'https://cdn.example.com/cal.png',
  governance_url: 'https://example.com/governance',
  user_documentation_url: 'https://example.com/docs',
  agent_interface_url: 'https://agent.example.com',
  redirect_uris: ['https://agent.example.com/callback', 'http://127.0.0.1/cb'],
  allowed_scopes: ['calendar.read', 'offline_access'],
  allowed_resources: ['https://mcp.example.com/mcp', 'https://tools.example.com/team/', 'urn:example:resource'],
  client_uris: ['https://agent.example.com/client.json'],
};

describe('admin: agents', () => {
  let broker: TestBroker;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('creates an agent (201) with every documented field, and reads it back', async () => {
    const created = await admin.post('/api/agents', AGENT);
    expect(created.status).toBe(201);
    const body = created.json<Record<string, unknown>>();
    expect(body).toMatchObject({ ...AGENT, permission_sets: [] });
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Object.keys(body).sort()).toEqual(
      [
        'id',
        'display_name',
        'description',
        'canonical_id',
        'client_id',
        'logo_url',
        'governance_url',
        'user_documentation_url',
        'agent_interface_url',
        'redirect_uris',
        'allowed_scopes',
        'allowed_resources',
        'client_uris',
        'dpop_bound_access_tokens',
        'permission_sets',
        'suspension',
        'created_at',
        'updated_at',
      ].sort(),
    );
    expect(new Date(body.created_at as string).toISOString()).toBe(body.created_at);
    const read = await admin.get(`/api/agents/${String(body.id)}`);
    expect(read.status).toBe(200);
    expect(read.json()).toEqual(body);
  });

  it('defaults optional fields to null and lists to empty', async () => {
    const created = (await admin.post('/api/agents', { display_name: 'Minimal' })).json();
    expect(created).toMatchObject({
      description: null,
      canonical_id: null,
      client_id: null,
      logo_url: null,
      redirect_uris: [],
      allowed_scopes: [],
      allowed_resources: [],
      client_uris: [],
      dpop_bound_access_tokens: null,
      permission_sets: [],
      suspension: null,
    });
  });

  it('takes null as "none" for the optional text and URL fields', async () => {
    const nulls = {
      description: null,
      canonical_id: null,
      client_id: null,
      logo_url: null,
      governance_url: null,
      user_documentation_url: null,
      agent_interface_url: null,
    };
    const created = await admin.post('/api/agents', { display_name: 'Nulls', ...nulls });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject(nulls);
  });

  it('lists agents as a bare array', async () => {
    const response = await admin.get('/api/agents');
    expect(response.status).toBe(200);
    const list = response.json<unknown>();
    expect(Array.isArray(list)).toBe(true);
    expect((list as { display_name: string }[]).map((a) => a.display_name)).toEqual(
      expect.arrayContaining(['Calendar Agent', 'Minimal']),
    );
  });

  it('replaces an agent wholesale on PUT', async () => {
    const id = (await admin.post('/api/agents', { ...AGENT, canonical_id: 'replace-me' })).json<{ id: string }>().id;
    const replaced = await admin.put(`/api/agents/${id}`, { display_name: 'Renamed' });
    expect(replaced.status).toBe(200);
    expect(replaced.json()).toMatchObject({
      id,
      display_name: 'Renamed',
      description: null,
      canonical_id: null,
      redirect_uris: [],
      allowed_scopes: [],
      allowed_resources: [],
    });
    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ display_name: 'Renamed', logo_url: null });
  });

  it('deletes an agent irreversibly (204, then 404)', async () => {
    const id = (await admin.post('/api/agents', { display_name: 'Doomed' })).json<{ id: string }>().id;
    expect((await admin.delete(`/api/agents/${id}`)).status).toBe(204);
    const gone = await admin.get(`/api/agents/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ error: 'agent not found', message: `no agent ${id}` });
    expect((await admin.delete(`/api/agents/${id}`)).status).toBe(404);
  });

  it('answers 404 agent not found for PUT of an unknown agent, and 400 invalid request for a malformed id', async () => {
    const unknown = await admin.put('/api/agents/3f2504e0-4f89-41d3-9a0c-0305e82c3301', { display_name: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.json<{ error: string }>().error).toBe('agent not found');
    const malformed = await admin.get('/api/agents/not-a-uuid');
    expect(malformed.status).toBe(400);
    expect(malformed.json()).toMatchObject({ error: 'invalid request', message: 'agentId: agent id must be a UUID' });
  });

  it('rejects a duplicate canonical_id with 409 conflict', async () => {
    await admin.post('/api/agents', { display_name: 'One', canonical_id: 'unique-one' });
    const duplicate = await admin.post('/api/agents', { display_name: 'Two', canonical_id: 'unique-one' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json()).toEqual({
      error: 'conflict',
      message: 'canonical_id "unique-one" is already used by another agent',
    });
  });

  describe('validation', () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['missing display_name', {}, 'invalid request body', 'display_name'],
      ['empty display_name', { display_name: '' }, 'validation failed', 'display_name'],
      ['display_name over 255', { display_name: 'x'.repeat(256) }, 'validation failed', 'display_name'],
      ['display_name of the wrong type', { display_name: 42 }, 'invalid request body', 'display_name'],
      ['unknown field', { display_name: 'x', colour: 'blue' }, 'invalid request body', 'colour'],
      [
        'non-http logo_url',
        { display_name: 'x', logo_url: 'ftp://cdn.example.com/x.png' },
        'validation failed',
        'logo_url',
      ],
      [
        'relative governance_url',
        { display_name: 'x', governance_url: '/governance' },
        'validation failed',
        'governance_url',
      ],
      [
        'redirect_uri with fragment',
        { display_name: 'x', redirect_uris: ['https://a.example.com/cb#frag'] },
        'validation failed',
        'redirect_uris',
      ],
      ['relative redirect_uri', { display_name: 'x', redirect_uris: ['/cb'] }, 'validation failed', 'redirect_uris'],
      ['scope with a space', { display_name: 'x', allowed_scopes: ['a b'] }, 'validation failed', 'allowed_scopes'],
      [
        'canonical_id with bad characters',
        { display_name: 'x', canonical_id: 'has space' },
        'validation failed',
        'canonical_id',
      ],
      [
        'UUID-shaped canonical_id',
        { display_name: 'x', canonical_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' },
        'validation failed',
        'canonical_id',
      ],
      [
        'canonical_id over 128',
        { display_name: 'x', canonical_id: 'a'.repeat(129) },
        'validation failed',
        'canonical_id',
      ],
      [
        'unknown permission set',
        { display_name: 'x', permission_sets: [{ permission_set_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }] },
        'validation failed',
        'permission_sets',
      ],
      [
        'bad requirement_type',
        {
          display_name: 'x',
          permission_sets: [
            { permission_set_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', requirement_type: 'sometimes' },
          ],
        },
        'validation failed',
        'permission_sets',
      ],
      // Lists and enumerations may be omitted, but null is not "omitted" (the document does not allow it).
      ['null redirect_uris', { display_name: 'x', redirect_uris: null }, 'invalid request body', 'redirect_uris'],
      ['null allowed_scopes', { display_name: 'x', allowed_scopes: null }, 'invalid request body', 'allowed_scopes'],
      ['null client_uris', { display_name: 'x', client_uris: null }, 'invalid request body', 'client_uris'],
      [
        'null allowed_resources',
        { display_name: 'x', allowed_resources: null },
        'invalid request body',
        'allowed_resources',
      ],
      // RFC 8707 resource indicators: the syntax of oauth2_authorization_server.local.resource_indicators.allowed_resources.
      [
        'relative allowed_resource',
        { display_name: 'x', allowed_resources: ['/mcp'] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resource with a fragment',
        { display_name: 'x', allowed_resources: ['https://mcp.example.com/mcp#f'] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resource with user info',
        { display_name: 'x', allowed_resources: ['https://user:pw@mcp.example.com/mcp'] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resource prefix on a non-http scheme',
        { display_name: 'x', allowed_resources: ['urn:example:'.concat('x/')] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resource prefix not written as its origin',
        { display_name: 'x', allowed_resources: ['HTTPS://MCP.example.com/'] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resource that is not a string',
        { display_name: 'x', allowed_resources: [42] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resource not written as an RFC 3986 URI',
        { display_name: 'x', allowed_resources: ['https://mcp.example.com/a|b'] },
        'validation failed',
        'allowed_resources',
      ],
      [
        'allowed_resources over 100 entries',
        { display_name: 'x', allowed_resources: Array.from({ length: 101 }, (_, i) => `https://mcp.example.com/${i}`) },
        'validation failed',
        'allowed_resources',
      ],
      ['null permission_sets', { display_name: 'x', permission_sets: null }, 'invalid request body', 'permission_sets'],
      [
        'null requirement_type',
        {
          display_name: 'x',
          permission_sets: [{ permission_set_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', requirement_type: null }],
        },
        'validation failed',
        'requirement_type',
      ],
      // URLs are published as `format: uri`, so one the URL parser takes but RFC 3986 does not is refused.
      [
        'logo_url not written as an RFC 3986 URI',
        { display_name: 'x', logo_url: 'https://cdn.example.com/a|b.png' },
        'validation failed',
        'logo_url',
      ],
      [
        'redirect_uri not written as an RFC 3986 URI',
        { display_name: 'x', redirect_uris: ['https://agent.example.com/cb{x}'] },
        'validation failed',
        'redirect_uris',
      ],
      [
        'non-ASCII client_uri',
        { display_name: 'x', client_uris: ['https://exämple.com/'] },
        'validation failed',
        'client_uris',
      ],
    ];
    for (const [name, body, error, field] of cases) {
      it(`rejects ${name} with 400 ${error} naming ${field}`, async () => {
        const response = await admin.post('/api/agents', body);
        expect(response.status).toBe(400);
        const payload = response.json<{ error: string; message: string }>();
        expect(payload.error).toBe(error);
        expect(payload.message).toContain(field);
      });
    }

    // A redirect or logo URL the consent page would navigate to or load on the broker's origin.
    const unsafe: [string, Record<string, unknown>, string][] = [
      [
        'javascript: redirect_uri',
        { redirect_uris: ['https://a.example.com/cb', 'javascript:alert(document.domain)//x'] },
        'redirect_uris',
      ],
      ['data: redirect_uri', { redirect_uris: ['data:text/html,<script>alert(1)</script>'] }, 'redirect_uris'],
      ['vbscript: redirect_uri', { redirect_uris: ['vbscript:msgbox(1)'] }, 'redirect_uris'],
      ['file: redirect_uri', { redirect_uris: ['file:///etc/passwd'] }, 'redirect_uris'],
      ['plain-http redirect_uri off loopback', { redirect_uris: ['http://agent.example.com/cb'] }, 'redirect_uris'],
      ['private-use scheme without a dot', { redirect_uris: ['myapp:/cb'] }, 'redirect_uris'],
      ['javascript: logo_url', { logo_url: 'javascript:alert(1)' }, 'logo_url'],
      ['data: logo_url', { logo_url: 'data:image/svg+xml,<svg onload=alert(1)>' }, 'logo_url'],
      ['plain-http logo_url off loopback', { logo_url: 'http://cdn.example.com/x.png' }, 'logo_url'],
      ['javascript: agent_interface_url', { agent_interface_url: 'javascript:alert(1)' }, 'agent_interface_url'],
    ];
    for (const [name, fields, field] of unsafe) {
      it(`rejects a ${name} with 400 validation failed naming ${field}, on create and replace`, async () => {
        const created = await admin.post('/api/agents', { display_name: 'safe' });
        const id = created.json<{ id: string }>().id;
        for (const response of [
          await admin.post('/api/agents', { display_name: 'x', ...fields }),
          await admin.put(`/api/agents/${id}`, { display_name: 'x', ...fields }),
        ]) {
          expect(response.status).toBe(400);
          const payload = response.json<{ error: string; message: string; details: { field: string }[] }>();
          expect(payload.error).toBe('validation failed');
          expect(payload.message).toContain(field);
          expect(payload.details.map((detail) => detail.field)).toContainEqual(expect.stringContaining(field));
        }
      });
    }

    it('stores allowed_resources once each, in order, and replaces them on PUT ([] and omitted: no restriction)', async () => {
      const resources = [
        'https://tools.example.com/',
        'http://127.0.0.1:8931/mcp',
        'https://tools.example.com/',
        'urn:example:mcp',
      ];
      const created = await admin.post('/api/agents', { display_name: 'resources', allowed_resources: resources });
      expect(created.status, created.text).toBe(201);
      const id = created.json<{ id: string }>().id;
      expect(created.json()).toMatchObject({
        allowed_resources: ['https://tools.example.com/', 'http://127.0.0.1:8931/mcp', 'urn:example:mcp'],
      });
      expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({
        allowed_resources: ['https://tools.example.com/', 'http://127.0.0.1:8931/mcp', 'urn:example:mcp'],
      });
      expect(
        (await admin.put(`/api/agents/${id}`, { display_name: 'resources', allowed_resources: [] })).json(),
      ).toMatchObject({ allowed_resources: [] });
      const hundred = Array.from({ length: 100 }, (_, i) => `https://mcp.example.com/${i}`);
      expect(
        (await admin.put(`/api/agents/${id}`, { display_name: 'resources', allowed_resources: hundred })).json(),
      ).toMatchObject({ allowed_resources: hundred });
      expect((await admin.put(`/api/agents/${id}`, { display_name: 'resources' })).json()).toMatchObject({
        allowed_resources: [],
      });
      expect(
        (await admin.get('/api/agents'))
          .json<{ id: string; allowed_resources: string[] }[]>()
          .find((agent) => agent.id === id)?.allowed_resources,
      ).toEqual([]);
    });

    it('accepts https, loopback http and private-use redirect URIs', async () => {
      const redirects = [
        'https://a.example.com/cb',
        'http://127.0.0.1:8123/cb',
        'http://[::1]/cb',
        'http://localhost:3000/cb',
        'com.example.app:/oauth2redirect',
      ];
      const response = await admin.post('/api/agents', {
        display_name: 'native',
        redirect_uris: redirects,
        logo_url: 'http://127.0.0.1:8123/logo.png',
      });
      expect(response.status, response.text).toBe(201);
      expect(response.json()).toMatchObject({ redirect_uris: redirects });
    });

    it('rejects malformed JSON with 400 invalid request body', async () => {
      const response = await http(`${broker.url('admin')}/api/agents`, {
        method: 'POST',
        headers: { 'x-remote-user': 'a', 'content-type': 'application/json' },
        body: '{',
      });
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('invalid request body');
    });
  });

  it('requires the principal header on every admin route (401)', async () => {
    const anonymous = admin.as(null);
    for (const [method, path] of [
      ['GET', '/api/agents'],
      ['POST', '/api/agents'],
      ['GET', '/api/agents/3f2504e0-4f89-41d3-9a0c-0305e82c3301'],
      ['GET', '/api/services'],
      ['GET', '/api/permission-sets'],
      ['GET', '/api/oauth2-server/signing-keys'],
      ['POST', '/api/agents/3f2504e0-4f89-41d3-9a0c-0305e82c3301/client-credentials'],
    ] as const) {
      const response = method === 'GET' ? await anonymous.get(path) : await anonymous.post(path, {});
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
    }
  });
});

// RFC 9449 §5.2 `dpop_bound_access_tokens`: true, false, or null (the server default), stored per agent.
describe.each(testBackends())("admin: an agent's DPoP policy on $name", (backend) => {
  let broker: TestBroker;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { storage: await backend.storage() } });
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await broker.stop();
  });

  const policyOf = async (id: string): Promise<unknown> => {
    const read = await admin.get(`/api/agents/${id}`);
    expect(read.status, read.text).toBe(200);
    const listed = (await admin.get('/api/agents')).json<{ id: string; dpop_bound_access_tokens?: unknown }[]>();
    const inList = listed.find((agent) => agent.id === id)?.dpop_bound_access_tokens;
    const single = read.json<{ dpop_bound_access_tokens?: unknown }>().dpop_bound_access_tokens;
    expect(inList).toEqual(single);
    return single;
  };

  it('stores dpop_bound_access_tokens: true and reads it back', async () => {
    const created = await admin.post('/api/agents', { display_name: 'dpop', dpop_bound_access_tokens: true });
    expect(created.status, created.text).toBe(201);
    expect(created.json()).toMatchObject({ dpop_bound_access_tokens: true });
    expect(await policyOf(created.json<{ id: string }>().id)).toBe(true);
  });

  it('answers null for an agent registered without it, and for an explicit null', async () => {
    const omitted = await admin.post('/api/agents', { display_name: 'no dpop policy' });
    expect(omitted.status, omitted.text).toBe(201);
    expect(omitted.json()).toHaveProperty('dpop_bound_access_tokens', null);
    expect(await policyOf(omitted.json<{ id: string }>().id)).toBeNull();
    const explicit = await admin.post('/api/agents', { display_name: 'null policy', dpop_bound_access_tokens: null });
    expect(explicit.status, explicit.text).toBe(201);
    expect(await policyOf(explicit.json<{ id: string }>().id)).toBeNull();
  });

  it('replaces it on PUT: to false, to null, and to null when omitted (full replacement)', async () => {
    const id = (await admin.post('/api/agents', { display_name: 'dpop', dpop_bound_access_tokens: true })).json<{
      id: string;
    }>().id;
    const toFalse = await admin.put(`/api/agents/${id}`, { display_name: 'dpop', dpop_bound_access_tokens: false });
    expect(toFalse.status, toFalse.text).toBe(200);
    expect(toFalse.json()).toMatchObject({ dpop_bound_access_tokens: false });
    expect(await policyOf(id)).toBe(false);
    const toNull = await admin.put(`/api/agents/${id}`, { display_name: 'dpop', dpop_bound_access_tokens: null });
    expect(toNull.json()).toHaveProperty('dpop_bound_access_tokens', null);
    expect(await policyOf(id)).toBeNull();
    await admin.put(`/api/agents/${id}`, { display_name: 'dpop', dpop_bound_access_tokens: true });
    expect(await policyOf(id)).toBe(true);
    const omitted = await admin.put(`/api/agents/${id}`, { display_name: 'dpop' });
    expect(omitted.json()).toHaveProperty('dpop_bound_access_tokens', null);
    expect(await policyOf(id)).toBeNull();
  });

  for (const value of ['yes', 'true', 1, 0, {}, []]) {
    it(`rejects dpop_bound_access_tokens ${JSON.stringify(value)} with 400 invalid request body, on create and replace`, async () => {
      const id = (await admin.post('/api/agents', { display_name: 'safe' })).json<{ id: string }>().id;
      for (const response of [
        await admin.post('/api/agents', { display_name: 'x', dpop_bound_access_tokens: value }),
        await admin.put(`/api/agents/${id}`, { display_name: 'x', dpop_bound_access_tokens: value }),
      ]) {
        expect(response.status).toBe(400);
        const payload = response.json<{ error: string; message: string; details: { field: string }[] }>();
        expect(payload.error).toBe('invalid request body');
        expect(payload.message).toContain('dpop_bound_access_tokens');
        expect(payload.details.map((detail) => detail.field)).toContain('dpop_bound_access_tokens');
      }
      expect(await policyOf(id)).toBeNull();
    });
  }
});
