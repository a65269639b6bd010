import { readFileSync } from 'node:fs';
import { ApiClient, http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API } from '../../apps/admin-api/src/admin-api.server';

interface Operation {
  readonly method: string;
  readonly path: string;
}

const document = JSON.parse(readFileSync('openapi/admin-api.json', 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Every operation of the admin OpenAPI document, path parameters filled with a well-formed id. */
const OPERATIONS: Operation[] = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((method) => METHODS.includes(method))
    .map((method) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{[^}]+\}/g, '0b1f6c1e-8c2a-4d5e-9f10-2a3b4c5d6e7f'),
    })),
);
/** `/health` and `/metrics` keep their own rules (trusted sources, no principal). */
const OWN_RULES = new Set(['/health', '/metrics']);
const WRITES = OPERATIONS.filter((operation) => operation.method !== 'GET');
const READS = OPERATIONS.filter((operation) => operation.method === 'GET' && !OWN_RULES.has(operation.path));

const AGENT = {
  display_name: 'Expense assistant',
  canonical_id: 'expense-assistant',
  description: 'Files expense reports',
};

describe('admin: roles (server.admin.authorization)', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  let viewer: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: [ADMIN_API],
      config: {
        server: {
          admin: {
            authorization: {
              admins: ['admin@example.com', 'both@example.com'],
              viewers: ['auditor@example.com', 'both@example.com'],
            },
          },
        },
      },
    });
    admin = new ApiClient(broker.url('admin'), 'admin@example.com');
    viewer = admin.as('auditor@example.com');
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('covers the write operations of the admin OpenAPI document', () => {
    // The iteration below is only as good as the document it walks.
    expect(WRITES.length).toBeGreaterThan(20);
    expect(WRITES).toContainEqual({ method: 'POST', path: '/api/agents' });
  });

  it("refuses a viewer's every write with 403 before reading the body, whatever the body", async () => {
    for (const { method, path } of WRITES) {
      // An unknown field would be `invalid request body` if the body were validated.
      const response = await http(`${broker.url('admin')}${path}`, {
        method,
        headers: { 'x-remote-user': 'auditor@example.com', 'content-type': 'application/json' },
        body: JSON.stringify({ not_a_field: true }),
      });
      expect({ method, path, status: response.status, body: response.json() }).toEqual({
        method,
        path,
        status: 403,
        body: {
          error: 'forbidden',
          message: 'read-only administrator: auditor@example.com can view but not change anything',
        },
      });
    }
  });

  it("refuses a viewer's malformed JSON body with the same 403, and a valid write changes nothing", async () => {
    const malformed = await http(`${broker.url('admin')}/api/agents`, {
      method: 'POST',
      headers: { 'x-remote-user': 'auditor@example.com', 'content-type': 'application/json' },
      body: '{"display_name": ',
    });
    expect(malformed.status).toBe(403);
    expect(malformed.json<{ error: string }>().error).toBe('forbidden');
    const before = (await admin.get('/api/agents')).json<unknown[]>();
    const refused = await viewer.post('/api/agents', AGENT);
    expect(refused.status).toBe(403);
    expect((await admin.get('/api/agents')).json<unknown[]>()).toEqual(before);
    // The same body from an administrator is accepted: the refusal was the role's.
    const created = await admin.post('/api/agents', AGENT);
    expect(created.status).toBe(201);
  });

  it("answers a viewer's every read", async () => {
    const created = await admin.post('/api/agents', { ...AGENT, canonical_id: 'viewer-reads' });
    expect(created.status).toBe(201);
    const agentId = created.json<{ id: string }>().id;
    expect((await viewer.get(`/api/agents/${agentId}`)).json()).toEqual(created.json());
    for (const { path } of READS) {
      const response = await viewer.get(path);
      // Reads of unknown ids are 404 and the export needs its range: never the role's 403.
      expect({ path, status: response.status }).not.toEqual({ path, status: 403 });
      expect({ path, status: response.status < 500 }).toEqual({ path, status: true });
    }
  });

  it('refuses a principal outside both lists everywhere but /health and /metrics', async () => {
    const stranger = admin.as('mallory@example.com');
    for (const { method, path } of OPERATIONS.filter((operation) => !OWN_RULES.has(operation.path))) {
      const response = await http(`${broker.url('admin')}${path}`, {
        method,
        headers: { 'x-remote-user': 'mallory@example.com', 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : JSON.stringify({ not_a_field: true }),
      });
      expect({ method, path, status: response.status, body: response.json() }).toEqual({
        method,
        path,
        status: 403,
        body: { error: 'forbidden', message: 'mallory@example.com is not an administrator of this broker' },
      });
    }
    expect((await stranger.get('/health')).status).toBe(200);
    expect((await stranger.get('/metrics')).status).toBe(200);
  });

  it('answers 401 without a principal header, before any role check', async () => {
    const anonymous = admin.as(null);
    for (const response of [await anonymous.get('/api/me'), await anonymous.post('/api/agents', AGENT)]) {
      expect(response.status).toBe(401);
      expect(response.json<{ error: string }>().error).toBe('unauthorized');
    }
  });

  it('GET /api/me names the principal and its role; in both lists a principal is a viewer', async () => {
    expect((await admin.get('/api/me')).json()).toEqual({ principal: 'admin@example.com', role: 'admin' });
    expect((await viewer.get('/api/me')).json()).toEqual({ principal: 'auditor@example.com', role: 'viewer' });
    const both = admin.as('both@example.com');
    expect((await both.get('/api/me')).json()).toEqual({ principal: 'both@example.com', role: 'viewer' });
    expect((await both.post('/api/agents', AGENT)).status).toBe(403);
    const stranger = await admin.as('mallory@example.com').get('/api/me');
    expect(stranger.status).toBe(403);
  });
});

describe('admin: roles when server.admin.authorization.admins is unset', () => {
  let broker: TestBroker;
  let anyone: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: [ADMIN_API],
      config: { server: { admin: { authorization: { viewers: 'auditor@example.com' } } } },
    });
    anyone = new ApiClient(broker.url('admin'), 'someone@example.com');
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('makes every principal the proxy passes an administrator, except the viewers', async () => {
    expect((await anyone.get('/api/me')).json()).toEqual({ principal: 'someone@example.com', role: 'admin' });
    const created = await anyone.post('/api/agents', AGENT);
    expect(created.status).toBe(201);
    const auditor = anyone.as('auditor@example.com');
    expect((await auditor.get('/api/me')).json()).toEqual({ principal: 'auditor@example.com', role: 'viewer' });
    expect((await auditor.delete(`/api/agents/${created.json<{ id: string }>().id}`)).status).toBe(403);
  });
});
