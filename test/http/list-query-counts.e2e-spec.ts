import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApprovalRepository, SessionRepository } from '@broker/persistence';
import { ApiClient, http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const SMALL = 2;
const LARGE = 50;
/** No list endpoint needs more statements than this (the list, and at most one read of child rows). */
const MAX_STATEMENTS = 2;

interface ListEndpoint {
  readonly server: 'admin' | 'enduser';
  readonly path: string;
  /** How many items the response lists, to show the list did grow. */
  readonly count: (body: unknown) => number;
}

const bare = (body: unknown): number => (body as unknown[]).length;
const items = (body: unknown): number => (body as { items: unknown[] }).items.length;
const data = (body: unknown): number => (body as { data: unknown[] }).data.length;

const ENDPOINTS: readonly ListEndpoint[] = [
  { server: 'admin', path: '/api/agents', count: bare },
  { server: 'admin', path: '/api/services', count: bare },
  { server: 'admin', path: '/api/resources', count: items },
  { server: 'admin', path: '/api/permission-sets', count: items },
  { server: 'admin', path: '/api/oauth2-server/signing-keys', count: items },
  { server: 'enduser', path: '/api/third-party/sessions', count: data },
  { server: 'enduser', path: '/api/consent/agents', count: data },
  { server: 'enduser', path: '/api/approvals/pending', count: data },
  { server: 'enduser', path: '/api/approvals/permanent', count: data },
];

/**
 * A list endpoint sends a fixed number of database statements whatever the length
 * of the list. Each request's log line carries `db_queries`; every list is read with two
 * items (each with child rows: scopes, protected resources, permission-set assignments,
 * grant delegations, sessions) and again with fifty, and the counts must be equal.
 */
describe('list endpoints: a fixed number of database statements whatever the list length', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  let alice: ApiClient;
  const services: string[] = [];
  const sets: string[] = [];
  const resources: string[] = [];
  const agents: string[] = [];

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(broker.url('enduser'), ALICE);
  });

  afterAll(async () => {
    await broker.stop();
  });

  async function created(client: ApiClient, path: string, body: Record<string, unknown>): Promise<string> {
    const response = await client.post(path, body);
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.json<{ id: string }>().id;
  }

  /** Grows every list to `size` items, each with child rows. */
  async function grow(size: number): Promise<void> {
    const app = broker.broker.server('enduser').app;
    const sessions = app.get(SessionRepository);
    const approvals = app.get(ApprovalRepository);
    const limits = { maxPending: 1_000, maxPerWindow: 1_000, windowMs: 60_000 };
    while (services.length < size) {
      const i = services.length;
      services.push(
        await created(admin, '/api/services', {
          display_name: `Service ${i}`,
          client_id: `client-${i}`,
          client_secret: `secret-${i}`,
          issuer_uri: 'https://idp.example.com',
          authorization_endpoint: 'https://idp.example.com/authorize',
          token_endpoint: 'https://idp.example.com/token',
          scopes: [
            { scope: 'read', description: 'Read' },
            { scope: 'write', description: 'Write' },
          ],
          protected_resources: [`https://api-${i}.example.com`, `https://api-${i}.example.com/v2`],
        }),
      );
      const now = new Date();
      await sessions.upsert({
        id: randomUUID(),
        principal: ALICE,
        serviceId: services[i] as string,
        accessTokenEnvelope: randomBytes(48),
        refreshTokenEnvelope: randomBytes(48),
        tokenType: 'Bearer',
        scopes: ['read'],
        accessTokenExpiresAt: new Date(now.getTime() + 3_600_000),
        refreshTokenExpiresAt: null,
        initiatedAt: now,
        updatedAt: now,
      });
    }
    while (resources.length < size) {
      const i = resources.length;
      const scopes = [
        { scope: 'files.read', description: 'Read' },
        { scope: 'files.write', description: 'Write' },
      ];
      resources.push(
        await created(admin, '/api/resources', {
          display_name: `MCP ${i}`,
          resource_uri: `https://mcp-${i}.example.com/mcp`,
          scopes,
        }),
      );
    }
    while (sets.length < size) {
      const i = sets.length;
      const covered = [services[i], services[(i + 1) % size]] as string[];
      const resourcesCovered = [resources[i], resources[(i + 1) % size]] as string[];
      sets.push(
        await created(admin, '/api/permission-sets', {
          name: `Set ${i}`,
          service_scopes: covered.map((service_id) => ({ service_id, scopes: ['read', 'write'] })),
          resource_scopes: resourcesCovered.map((resource_id) => ({ resource_id, scopes: ['files.read'] })),
        }),
      );
    }
    while (agents.length < size) {
      const i = agents.length;
      const assigned = [sets[i], sets[(i + 1) % size]] as string[];
      const agent = await created(admin, '/api/agents', {
        display_name: `Agent ${i}`,
        redirect_uris: ['https://agent.example.com/cb'],
        permission_sets: assigned.map((permission_set_id) => ({ permission_set_id })),
      });
      agents.push(agent);
      const grant = await alice.post(`/api/consent/agents/${agent}/grants`, {
        granted_permission_sets: {
          [assigned[0] as string]: [services[i]],
          [assigned[1] as string]: [services[(i + 1) % size]],
        },
      });
      expect(grant.status).toBe(201);
      const now = new Date();
      for (const persistence of ['pending', 'permanent'] as const) {
        const id = randomUUID();
        const argumentsJson = JSON.stringify({ i, persistence });
        await approvals.create(
          {
            id,
            principal: ALICE,
            agentId: agent,
            toolName: `tool_${i}`,
            argumentsJson,
            argumentsHash: createHash('sha256').update(argumentsJson).digest('hex'),
            metadataJson: '{}',
            riskLevel: null,
            agentSessionId: null,
            expiresAt: new Date(now.getTime() + 600_000),
          },
          limits,
          now,
        );
        if (persistence === 'permanent')
          expect(await approvals.approve(id, ALICE, 'permanent', null, now)).toBeDefined();
      }
    }
    const keys = (await admin.get('/api/oauth2-server/signing-keys')).json<{ items: unknown[] }>().items.length;
    for (let i = keys; i < size; i += 1)
      expect((await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'ES256' })).status).toBe(201);
  }

  /** Sends one request with a trace id of its own; returns the response and the `db_queries` of its log line. */
  async function send(
    server: 'admin' | 'enduser',
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown; statements: unknown }> {
    const traceId = randomBytes(16).toString('hex');
    const headers: Record<string, string> = {
      'x-remote-user': server === 'admin' ? 'admin@example.com' : ALICE,
      traceparent: `00-${traceId}-${'ab'.repeat(8)}-01`,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await http(`${broker.url(server)}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let line: Record<string, unknown> | undefined;
    for (let attempt = 0; attempt < 100 && line === undefined; attempt += 1) {
      line = broker.logs.records().find((record) => record.trace_id === traceId && record.msg === 'request completed');
      if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(line, `no log line for ${method} ${path}`).toBeDefined();
    return {
      status: response.status,
      body: response.text === '' ? undefined : response.json<unknown>(),
      statements: line?.db_queries,
    };
  }

  async function measure(endpoint: ListEndpoint): Promise<{ listed: number; statements: number }> {
    const response = await send(endpoint.server, 'GET', endpoint.path);
    expect(response.status, endpoint.path).toBe(200);
    return { listed: endpoint.count(response.body), statements: response.statements as number };
  }

  async function measureAll(): Promise<Map<string, { listed: number; statements: number }>> {
    const results = new Map<string, { listed: number; statements: number }>();
    for (const endpoint of ENDPOINTS) results.set(endpoint.path, await measure(endpoint));
    return results;
  }

  it('reports db_queries on the request log line: every statement of the request, bodies parsed or not', async () => {
    await grow(SMALL);
    // The agent row, then its permission-set assignments.
    expect((await send('admin', 'GET', `/api/agents/${agents[0] as string}`)).statements).toBe(2);
    // A write with a JSON body: at least BEGIN, the agent, its assignments, COMMIT.
    const write = await send('admin', 'POST', '/api/agents', {
      display_name: 'Counted',
      permission_sets: [{ permission_set_id: sets[0] }],
    });
    expect(write.status).toBe(201);
    expect(write.statements).toBeGreaterThanOrEqual(4);
    const removed = await send('admin', 'DELETE', `/api/agents/${(write.body as { id: string }).id}`);
    expect(removed.status).toBe(204);
    expect(removed.statements).toBeGreaterThanOrEqual(1);
    // No database work: zero, not absent.
    expect((await send('admin', 'GET', '/api/nothing-here')).statements).toBe(0);
  });

  it('sends as many statements for fifty items as for two, on every list endpoint', async () => {
    await grow(SMALL);
    const small = await measureAll();
    await grow(LARGE);
    const large = await measureAll();
    const statements = (results: typeof small): Record<string, number> =>
      Object.fromEntries([...results].map(([path, { statements: n }]) => [path, n]));
    // Every list did grow (signing keys: the start-up key is one more)...
    for (const endpoint of ENDPOINTS) {
      expect((small.get(endpoint.path) as { listed: number }).listed, endpoint.path).toBeLessThanOrEqual(SMALL + 1);
      expect((large.get(endpoint.path) as { listed: number }).listed, endpoint.path).toBeGreaterThanOrEqual(LARGE);
    }
    // ...and its statements did not.
    expect(statements(large)).toEqual(statements(small));
    for (const n of Object.values(statements(large))) {
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThanOrEqual(MAX_STATEMENTS);
    }
  });
});
