import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const JSON_TYPE = { 'content-type': 'application/json' };

interface ErrorBody {
  error: string;
  message: string;
  details?: { field: string; problem: string }[];
}

/** 20 KB of `[` and as many `]`: deeper than any recursive walk survives. */
const DEEP = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;

/**
 * Bad input never deletes data and never gives a 500. Prototype keys are
 * refused (not dropped), nesting is bounded while parsing, control characters are refused
 * where they have no meaning (on both databases), impossible dates are refused, gateways
 * authenticate before their bodies are looked at, and operations without a body refuse one.
 */
describe.each(testBackends())('hostile input on $name', (backend) => {
  let gateway: GatewayFixture;
  let broker: TestBroker;
  let base: string;
  let admin: ApiClient;
  let alice: ApiClient;
  let registry: RegistryFixture;

  beforeAll(async () => {
    gateway = await startGatewayFixture({ servers: BOTH_SERVERS, backend, subjectAudience: 'gateway' });
    ({ broker, base } = gateway);
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
    registry = await createRegistry(admin);
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const post = (url: string, body: string, headers: Record<string, string> = {}): Promise<HttpResponse> =>
    http(url, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body });
  const asAdmin = { 'x-remote-user': 'admin@example.com' };
  const asAlice = { 'x-remote-user': ALICE };

  async function gatewayHeaders(principal = ALICE, agentId = registry.agent): Promise<Record<string, string>> {
    return {
      authorization: `Bearer ${await gateway.subjectToken(principal, agentId)}`,
      'x-client-assertion': await gateway.assertion(),
    };
  }

  async function grantMail(): Promise<void> {
    const response = await alice.post(`/api/consent/agents/${registry.agent}/grants`, {
      granted_permission_sets: { [registry.readMail]: [registry.mail] },
    });
    expect(response.status, response.text).toBe(201);
  }

  async function grantsOfAlice(): Promise<unknown> {
    return (await alice.get(`/api/consent/agents/${registry.agent}/grants`)).json<{ data: unknown[] }>().data;
  }

  function expectError(response: HttpResponse, status: number, error: string, field?: string): ErrorBody {
    expect(response.status, response.text).toBe(status);
    const body = response.json<ErrorBody>();
    expect(body.error).toBe(error);
    if (field !== undefined) expect(body.details?.map((detail) => detail.field)).toContain(field);
    return body;
  }

  describe('prototype keys', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      it(`refuses granted_permission_sets {"${key}": [...]} with 400 invalid request naming it, and keeps the grant`, async () => {
        await grantMail();
        const before = await grantsOfAlice();
        expect(before).toHaveLength(1);
        const response = await post(
          `${base}/api/consent/agents/${registry.agent}/grants`,
          `{"granted_permission_sets":{"${key}":["x"]}}`,
          asAlice,
        );
        expectError(response, 400, 'invalid request', `granted_permission_sets.${key}`);
        expect(await grantsOfAlice()).toEqual(before);
      });
    }

    it('refuses a prototype key at any depth of an admin body (400 invalid request body naming its path) and writes nothing', async () => {
      const agents = (await admin.get('/api/agents')).text;
      expectError(
        await post(
          `${broker.url('admin')}/api/agents`,
          '{"display_name":"Proto","__proto__":{"display_name":"x"}}',
          asAdmin,
        ),
        400,
        'invalid request body',
        '__proto__',
      );
      expectError(
        await post(
          `${broker.url('admin')}/api/agents`,
          `{"display_name":"Proto","permission_sets":[{"permission_set_id":"${registry.readMail}","constructor":{}}]}`,
          asAdmin,
        ),
        400,
        'invalid request body',
        'permission_sets.0.constructor',
      );
      expectError(
        await http(`${broker.url('admin')}/api/permission-sets/${registry.readMail}`, {
          method: 'PUT',
          headers: { ...JSON_TYPE, ...asAdmin },
          body: `{"name":"x","service_scopes":[],"prototype":1}`,
        }),
        400,
        'invalid request body',
        'prototype',
      );
      expect((await admin.get('/api/agents')).text).toBe(agents);
      expect((await admin.get(`/api/permission-sets/${registry.readMail}`)).json()).toMatchObject({
        name: expect.stringMatching(/^Read mail/) as unknown,
      });
    });

    it('refuses a prototype key in a query string instead of ignoring it', async () => {
      expectError(await admin.get('/api/permission-sets?__proto__=x'), 400, 'invalid request', '__proto__');
    });
  });

  describe('nesting', () => {
    it('answers 20 KB of [ with 400 on every route that reads a body, in its vocabulary, never 500', async () => {
      const admin = broker.url('admin');
      const someId = randomUUID();
      const routes: [string, string, Record<string, string>, string][] = [
        ['POST', `${admin}/api/agents`, asAdmin, 'invalid request body'],
        ['PUT', `${admin}/api/agents/${registry.agent}`, asAdmin, 'invalid request body'],
        ['POST', `${admin}/api/services`, asAdmin, 'invalid request body'],
        ['PUT', `${admin}/api/services/${registry.mail}`, asAdmin, 'invalid request body'],
        ['POST', `${admin}/api/permission-sets`, asAdmin, 'invalid request body'],
        ['PUT', `${admin}/api/permission-sets/${registry.readMail}`, asAdmin, 'invalid request body'],
        ['POST', `${admin}/api/oauth2-server/signing-keys`, asAdmin, 'invalid request body'],
        ['POST', `${base}/api/consent/agents/${registry.agent}/grants`, asAlice, 'invalid request'],
        ['POST', `${base}/api/approvals/${someId}/approve`, asAlice, 'bad request'],
        ['POST', `${base}/api/approvals/${someId}/scope-preview`, asAlice, 'bad request'],
        ['POST', `${base}/api/approvals/${someId}/deny`, asAlice, 'bad request'],
        ['POST', `${base}/api/approvals`, await gatewayHeaders(), 'bad request'],
      ];
      for (const [method, url, headers, error] of routes) {
        const response = await http(url, { method, headers: { ...JSON_TYPE, ...headers }, body: DEEP });
        expect(response.status, `${method} ${url}: ${response.text}`).toBe(400);
        expect(response.json<ErrorBody>(), `${method} ${url}`).toMatchObject({
          error,
          details: [{ field: 'body', problem: 'must not nest deeper than 64 levels' }],
        });
      }
    });

    it('names the field a deep value is under, and keeps 64 levels below the top', async () => {
      const nested = (levels: number): string =>
        `{"granted_permission_sets":${'['.repeat(levels)}${']'.repeat(levels)}}`;
      const deep = expectError(
        await post(`${base}/api/consent/agents/${registry.agent}/grants`, nested(65), asAlice),
        400,
        'invalid request',
      );
      expect(deep.details).toEqual([
        { field: 'granted_permission_sets', problem: 'must not nest deeper than 64 levels' },
      ]);
      // 64 levels pass the parser; the grant's own rule then refuses the shape.
      const body = expectError(
        await post(`${base}/api/consent/agents/${registry.agent}/grants`, nested(64), asAlice),
        400,
        'invalid request',
        'granted_permission_sets',
      );
      expect(body.message).not.toContain('nest');
    });

    it('refuses a number beyond the double range instead of storing it as null', async () => {
      const response = await post(
        `${base}/api/approvals`,
        '{"metadata":{},"tool_name":"huge","arguments":{"n":1e400}}',
        await gatewayHeaders(),
      );
      expectError(response, 400, 'bad request', 'arguments');
      expect(response.text).not.toContain('1e400');
    });
  });

  describe('control characters', () => {
    const agentFields: [string, string, Record<string, unknown>][] = [
      ['display_name', 'NUL', { display_name: 'a\u0000b' }],
      ['description', 'NUL', { display_name: 'ok', description: 'x\u0000' }],
      ['client_id', 'NUL', { display_name: 'ok', client_id: 'c\u0000' }],
      ['logo_url', 'NUL', { display_name: 'ok', logo_url: 'https://cdn.example.com/\u0000.png' }],
      ['redirect_uris', 'NUL', { display_name: 'ok', redirect_uris: ['https://agent.example.com/cb\u0000'] }],
      ['display_name', 'BEL', { display_name: 'bell\u0007' }],
      ['display_name', 'an ANSI escape', { display_name: 'escape\u001b[31m' }],
      ['display_name', 'a C1 control (NEL)', { display_name: 'next line\u0085' }],
      ['display_name', 'a lone surrogate', { display_name: 'lone \ud800 surrogate' }],
      ['description', 'DEL', { display_name: 'ok', description: 'delete\u007f' }],
    ];
    for (const [field, what, body] of agentFields) {
      it(`refuses an agent whose ${field} holds ${what} with 400 validation failed naming it`, async () => {
        expectError(await admin.post('/api/agents', body), 400, 'validation failed', field);
      });
    }

    it('refuses NUL in service and permission set text (names, descriptions, client ids, secrets, scope descriptions, resources) naming the field', async () => {
      const service = (overrides: Record<string, unknown>): Record<string, unknown> => ({
        display_name: 'Svc',
        client_id: `client-${randomUUID()}`,
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/authorize',
        token_endpoint: 'https://idp.example.com/token',
        protected_resources: [`https://${randomUUID()}.example.com/api`],
        ...overrides,
      });
      const cases: [string, string, Record<string, unknown>][] = [
        ['/api/services', 'display_name', service({ display_name: 'S\u0000' })],
        ['/api/services', 'description', service({ description: 'd\u0000' })],
        ['/api/services', 'client_id', service({ client_id: 'c\u0000' })],
        ['/api/services', 'client_secret', service({ client_secret: 's\u0000' })],
        [
          '/api/services',
          'scopes.0.description',
          service({ scopes: [{ scope: 'mail.read', description: 'Read\u0000' }] }),
        ],
        ['/api/services', 'protected_resources', service({ protected_resources: ['https://api.example.com/\u0000'] })],
        ['/api/services', 'issuer_uri', service({ issuer_uri: 'https://idp.example.com/\u0000' })],
        ['/api/permission-sets', 'name', { name: 'n\u0000', service_scopes: [] }],
        [
          '/api/permission-sets',
          'description',
          { name: `n-${randomUUID()}`, description: '\u0000', service_scopes: [] },
        ],
        [
          '/api/resources',
          'display_name',
          { display_name: 'R\u0000', resource_uri: `https://${randomUUID()}.example.com/mcp`, scopes: [] },
        ],
        [
          '/api/resources',
          'scopes.0.description',
          {
            display_name: 'R',
            resource_uri: `https://${randomUUID()}.example.com/mcp`,
            scopes: [{ scope: 'files.read', description: 'Read\u0000' }],
          },
        ],
        [
          '/api/resources',
          'resource_uri',
          { display_name: 'R', resource_uri: `https://${randomUUID()}.example.com/\u0000`, scopes: [] },
        ],
      ];
      for (const [path, field, body] of cases)
        expectError(await admin.post(path, body), 400, 'validation failed', field);
    });

    it('keeps tabs and line breaks in descriptions', async () => {
      const response = await admin.post('/api/agents', {
        display_name: 'Multi-line',
        description: 'First line\n\tSecond line\r\n',
      });
      expect(response.status, response.text).toBe(201);
      expect(response.json<{ description: string }>().description).toBe('First line\n\tSecond line\r\n');
    });

    it('refuses NUL in the sync query (400 bad request, not a database error)', async () => {
      const headers = { 'x-client-assertion': await gateway.assertion() };
      expectError(await http(`${base}/api/approvals?principal=a%00b`, { headers }), 400, 'bad request', 'principal');
      const again = { 'x-client-assertion': await gateway.assertion() };
      expectError(
        await http(`${base}/api/approvals?agent_session_id=a%00b`, { headers: again }),
        400,
        'bad request',
        'agent_session_id',
      );
    });
  });

  describe('impossible dates', () => {
    for (const validUntil of [
      '2030-02-30T00:00:00Z',
      '2031-02-29T00:00:00Z',
      '2030-04-31T00:00:00Z',
      '2030-13-01T00:00:00Z',
      '2030-01-01T24:00:00Z',
      '2030-01-01T00:00:60Z',
      '2030-01-01T00:00:00+24:00',
    ]) {
      it(`refuses valid_until ${validUntil} (400 invalid request) and changes nothing, not even with an empty grant`, async () => {
        await grantMail();
        const before = await grantsOfAlice();
        expectError(
          await alice.post(`/api/consent/agents/${registry.agent}/grants`, {
            granted_permission_sets: { [registry.readMail]: [registry.mail] },
            valid_until: validUntil,
          }),
          400,
          'invalid request',
          'valid_until',
        );
        expectError(
          await alice.post(`/api/consent/agents/${registry.agent}/grants`, {
            granted_permission_sets: {},
            valid_until: validUntil,
          }),
          400,
          'invalid request',
          'valid_until',
        );
        expect(await grantsOfAlice()).toEqual(before);
      });
    }

    it('accepts 29 February of a leap year as written', async () => {
      const response = await alice.post(`/api/consent/agents/${registry.agent}/grants`, {
        granted_permission_sets: { [registry.readMail]: [registry.mail] },
        valid_until: '2032-02-29T12:30:00Z',
      });
      expect(response.status, response.text).toBe(201);
      expect(response.json<{ data: { valid_until: string } }>().data.valid_until).toBe('2032-02-29T12:30:00.000Z');
    });
  });

  describe('gateways authenticate first', () => {
    const badBodies: [string, string][] = [
      ['an empty object', '{}'],
      ['a wrong type', '{"metadata":1,"tool_name":2,"arguments":3}'],
      ['20 KB of [', DEEP],
      ['malformed JSON', '{"metadata":'],
      ['a prototype key', '{"__proto__":{},"metadata":{},"tool_name":"t","arguments":{}}'],
      ['a valid request', '{"metadata":{},"tool_name":"t","arguments":{}}'],
    ];
    for (const [name, body] of badBodies) {
      it(`answers create with ${name} and no or bad credentials 401, like any other body`, async () => {
        for (const headers of [{}, { authorization: 'Bearer not.a.jwt', 'x-client-assertion': 'not.a.jwt' }] as Record<
          string,
          string
        >[]) {
          expectError(await post(`${base}/api/approvals`, body, headers), 401, 'unauthorized');
        }
      });
    }

    it('answers consume and sync 401 without credentials whatever the path, query or body', async () => {
      expectError(await post(`${base}/api/approvals/not-a-uuid/consume`, '{}'), 401, 'unauthorized');
      expectError(await post(`${base}/api/approvals/${randomUUID()}/consume`, DEEP), 401, 'unauthorized');
      expectError(await post(`${base}/api/approvals/${randomUUID()}/consume`, '{"x":1}'), 401, 'unauthorized');
      expectError(await http(`${base}/api/approvals?principal=${'p'.repeat(300)}`), 401, 'unauthorized');
      expectError(await http(`${base}/api/approvals?principal=a%00b`), 401, 'unauthorized');
    });

    it('validates them once the gateway is authenticated', async () => {
      expectError(
        await post(`${base}/api/approvals/not-a-uuid/consume`, '{}', {
          authorization: (await gatewayHeaders()).authorization as string,
        }),
        400,
        'bad request',
        'id',
      );
      expectError(await post(`${base}/api/approvals`, '{}', await gatewayHeaders()), 400, 'bad request', 'tool_name');
    });
  });

  describe('operations that take no body', () => {
    it('refuses a body on client credential generation (400 invalid request body) and generates nothing; none or {} is fine', async () => {
      const agent = (await admin.post('/api/agents', { display_name: 'No body' })).json<{ id: string }>().id;
      expectError(
        await admin.post(`/api/agents/${agent}/client-credentials`, { rotate: true }),
        400,
        'invalid request body',
        'body',
      );
      expectError(
        await admin.post(`/api/agents/${agent}/client-credentials`, [1]),
        400,
        'invalid request body',
        'body',
      );
      expect((await admin.get(`/api/agents/${agent}/client-credentials`)).status).toBe(404);
      expect((await admin.post(`/api/agents/${agent}/client-credentials`, {})).status).toBe(201);
      expect((await admin.post(`/api/agents/${agent}/client-credentials`)).status).toBe(200);
    });

    it('refuses a body on the grant revocation and on approval revoke and consume (after authentication), changing nothing', async () => {
      await grantMail();
      const before = await grantsOfAlice();
      expectError(
        await http(`${base}/api/consent/agents/${registry.agent}/grants`, {
          method: 'DELETE',
          headers: { ...JSON_TYPE, ...asAlice },
          body: '{"__proto__":1}',
        }),
        400,
        'invalid request',
        'body',
      );
      expect(await grantsOfAlice()).toEqual(before);
      expectError(
        await post(`${base}/api/approvals/${randomUUID()}/revoke`, '{"persistence":"permanent"}', asAlice),
        400,
        'bad request',
        'body',
      );
      expectError(
        await post(`${base}/api/approvals/${randomUUID()}/consume`, DEEP, {
          authorization: (await gatewayHeaders()).authorization as string,
        }),
        400,
        'bad request',
        'body',
      );
    });
  });

  describe('long lists', () => {
    it('refuses more than 1,000 protected resources with 400 validation failed (their rows overflowed the bind parameters: 500)', async () => {
      const resources = Array.from({ length: 25_000 }, (_, i) => `https://r${i}.example.com/api`);
      const response = await admin.post('/api/services', {
        display_name: 'Many',
        client_id: 'many',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: resources,
      });
      expectError(response, 400, 'validation failed', 'protected_resources');
    });

    it('reports at most 100 issues for a body that breaks a rule 200,000 times', async () => {
      const response = await admin.post('/api/agents', {
        display_name: 'x',
        permission_sets: new Array(200_000).fill(1),
      });
      const body = expectError(response, 400, 'invalid request body', 'permission_sets');
      expect(body.details?.length).toBeLessThanOrEqual(100);
    });
  });
});
