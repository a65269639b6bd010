import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  ApiClient,
  http,
  startGatewayFixture,
  startTestBroker,
  type GatewayFixture,
  type HttpResponse,
  type SignOptions,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { grantedAgent, type GrantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const CONSENT_UI = 'https://consent.example.com';
const SECRET_ARGUMENT = 'argument-secret-value-7c1d9e';

interface Created {
  id: string;
  status: string;
  approval_url: string;
  created_at: string;
}

describe('tool approvals', () => {
  let gateway: GatewayFixture;
  let broker: TestBroker;
  let base: string;
  let agent: string;
  let otherAgent: string;
  let mailAgent: GrantedAgent;
  const urls = () => ({ admin: broker.url('admin'), enduser: base });
  const sentTokens: string[] = [];

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      // Users' tokens are addressed to the gateway here (the default would be the broker's issuer).
      subjectAudience: 'gateway',
      config: {
        server: { enduser: { consent_ui_url: CONSENT_UI } },
        token_exchange: { authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } } },
        approvals: {
          sync: { authorization: { cel: { expression: 'client_assertion.sub in ["gateway-1", "sync-only"]' } } },
        },
      },
    });
    ({ broker, base } = gateway);
    otherAgent = (await grantedAgent(urls(), [ALICE, BOB], 'Other Agent')).id;
  });

  // A fresh agent per test: creations are limited to 10 per minute per (user, agent).
  beforeEach(async () => {
    mailAgent = await grantedAgent(urls(), [ALICE, BOB]);
    agent = mailAgent.id;
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  async function assertion(sub = 'gateway-1', options: SignOptions = {}): Promise<string> {
    const jwt = await gateway.assertion({ sub }, options);
    sentTokens.push(jwt);
    return jwt;
  }

  async function subject(
    principal: string,
    agentId: string,
    ttlSeconds?: number,
    audience = 'gateway',
  ): Promise<string> {
    const jwt = await gateway.subjectToken(principal, agentId, {}, { audience, ttlSeconds });
    sentTokens.push(jwt);
    return jwt;
  }

  async function create(
    body: Record<string, unknown>,
    who: {
      principal?: string;
      agentId?: string;
      assertionSub?: string;
      headers?: Record<string, string | undefined>;
    } = {},
  ): Promise<HttpResponse> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      authorization: `Bearer ${await subject(who.principal ?? ALICE, who.agentId ?? agent)}`,
      'x-client-assertion': await assertion(who.assertionSub ?? 'gateway-1'),
    };
    for (const [name, value] of Object.entries(who.headers ?? {})) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    return http(`${base}/api/approvals`, { method: 'POST', headers, body: JSON.stringify(body) });
  }

  const request = (tool: string, args: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
    metadata,
    tool_name: tool,
    arguments: args,
    risk_level: 'medium',
  });

  async function pending(
    tool: string,
    args: Record<string, unknown> = { n: randomUUID() },
    who: { principal?: string; agentId?: string; metadata?: Record<string, unknown> } = {},
  ): Promise<string> {
    const response = await create(request(tool, args, who.metadata ?? {}), who);
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: Created }>().data.id;
  }

  async function sync(query = '', headers: Record<string, string> = {}): Promise<HttpResponse> {
    return http(`${base}/api/approvals${query}`, { headers: { 'x-client-assertion': await assertion(), ...headers } });
  }

  const user = (principal: string | null = ALICE): ApiClient => new ApiClient(base, principal);

  it("creates a pending approval for the subject token's user and agent (201) and shows the full record to that user", async () => {
    const response = await create(
      request('send_email', { to: 'bob@example.com', body: SECRET_ARGUMENT }, { conversation: 'c-1' }),
      { headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } },
    );
    expect(response.status, response.text).toBe(201);
    const created = response.json<{ data: Created }>().data;
    expect(Object.keys(created).sort()).toEqual(['approval_url', 'created_at', 'id', 'status']);
    expect(created.status).toBe('pending');
    expect(created.approval_url).toBe(`${CONSENT_UI}/approvals/${created.id}`);
    expect(response.headers.traceresponse).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-/);
    const audit = broker.logs.records().find((r) => r.event === 'approval_created' && r.approval_id === created.id);
    expect(audit).toMatchObject({
      request_id: '0af7651916cd43dd8448eb211c80319c',
      principal: ALICE,
      agent_id: agent,
      tool_name: 'send_email',
      outcome: 'created',
    });

    const record = (await user().get(`/api/approvals/${created.id}`)).json<{ data: Record<string, unknown> }>().data;
    expect(record).toEqual({
      id: created.id,
      principal: ALICE,
      agent_id: agent,
      agent_display_name: 'Mail Agent',
      tool_name: 'send_email',
      arguments: { to: 'bob@example.com', body: SECRET_ARGUMENT },
      metadata: { conversation: 'c-1' },
      risk_level: 'medium',
      status: 'pending',
      persistence: null,
      params_pattern: null,
      agent_session_id: null,
      consumed: false,
      created_at: created.created_at,
      approved_at: null,
      denied_at: null,
      consumed_at: null,
      revoked_at: null,
      expires_at: new Date(Date.parse(created.created_at) + 10 * 60_000).toISOString(),
      approval_url: created.approval_url,
      requested_via: 'gateway',
      binding_message: null,
      authorization_details: null,
      mcp_server_display_name: null,
    });
  });

  it('syncs the state with an ETag', async () => {
    const response = await sync(`?principal=${encodeURIComponent(ALICE)}`);
    expect(response.status, response.text).toBe(200);
    expect(response.headers.etag).toMatch(/^"v\d+"$/);
  });

  describe('create', () => {
    it('returns the pending duplicate (200, same id) for the same user, agent, tool and arguments in any key order', async () => {
      const first = await create(request('read_file', { path: '/etc/hosts', lines: 10 }));
      expect(first.status).toBe(201);
      const again = await create(request('read_file', { lines: 10, path: '/etc/hosts' }, { other: 'metadata' }));
      expect(again.status).toBe(200);
      expect(again.json<{ data: Created }>().data).toEqual(first.json<{ data: Created }>().data);
      expect((await create(request('read_file', { path: '/etc/hosts', lines: 11 }))).status).toBe(201);
      expect(
        (await create(request('read_file', { path: '/etc/hosts', lines: 10 }), { agentId: otherAgent })).status,
      ).toBe(201);
      expect((await create(request('read_file', { path: '/etc/hosts', lines: 10 }), { principal: BOB })).status).toBe(
        201,
      );
    });

    it('decides concurrent duplicates by the unique index: one 201, every answer the same record', async () => {
      const responses = await Promise.all(Array.from({ length: 6 }, () => create(request('race_tool', { x: 1 }))));
      expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(responses.map((r) => r.json<{ data: Created }>().data.id)).size).toBe(1);
    });

    it('keeps arguments and metadata exactly as sent: NUL characters, lone surrogates, keys like __proto__ and constructor', async () => {
      const body = `{"metadata":{"m":"\\u0000"},"tool_name":"odd","arguments":{"nul":"a\\u0000b","surrogate":"\\ud800","nested":{"deep":[1,2.5,null,true,{"k":"v"}]},"__proto__":"own key","constructor":{"prototype":1}}}`;
      const response = await http(`${base}/api/approvals`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await subject(ALICE, agent)}`,
          'x-client-assertion': await assertion(),
        },
        body,
      });
      expect(response.status, response.text).toBe(201);
      const record = (await user().get(`/api/approvals/${response.json<{ data: Created }>().data.id}`)).text;
      expect(record).toContain(
        '"arguments":{"nul":"a\\u0000b","surrogate":"\\ud800","nested":{"deep":[1,2.5,null,true,{"k":"v"}]},"__proto__":"own key","constructor":{"prototype":1}}',
      );
      expect(record).toContain('"metadata":{"m":"\\u0000"}');
    });

    const invalid: [string, Record<string, unknown>, string][] = [
      ['tool_name over 255 characters', { metadata: {}, tool_name: 'x'.repeat(256), arguments: {} }, 'tool_name'],
      ['an empty tool_name', { metadata: {}, tool_name: '', arguments: {} }, 'tool_name'],
      ['no metadata', { tool_name: 't', arguments: {} }, 'metadata'],
      ['no arguments', { metadata: {}, tool_name: 't' }, 'arguments'],
      ['arguments as an array', { metadata: {}, tool_name: 't', arguments: [1] }, 'arguments'],
      ['metadata null', { metadata: null, tool_name: 't', arguments: {} }, 'metadata'],
      ['an unknown risk_level', { metadata: {}, tool_name: 't', arguments: {}, risk_level: 'high' }, 'risk_level'],
      // An enum refuses null: a gateway omits risk_level to give none.
      ['risk_level null', { metadata: {}, tool_name: 't', arguments: {}, risk_level: null }, 'risk_level'],
      ['tool_name null', { metadata: {}, tool_name: null, arguments: {} }, 'tool_name'],
      ['an unknown field', { metadata: {}, tool_name: 't', arguments: {}, priority: 1 }, 'priority'],
      [
        'a non-string agent_session_id',
        { metadata: { agent_session_id: 7 }, tool_name: 't', arguments: {} },
        'metadata.agent_session_id',
      ],
      ['a tool name with a control character', { metadata: {}, tool_name: 'a\nb', arguments: {} }, 'tool_name'],
    ];
    for (const [name, body, field] of invalid) {
      it(`refuses ${name} with 400 bad request naming ${field}`, async () => {
        const response = await create(body);
        expect(response.status, response.text).toBe(400);
        const error = response.json<{ error: string; message: string; details: { field: string }[] }>();
        expect(error.error).toBe('bad request');
        expect(error.details.map((d) => d.field)).toContain(field);
      });
    }

    it('refuses arguments nested deeper than 64 levels (400), even 100,000 levels, without a 500', async () => {
      for (const depth of [65, 100_000]) {
        const body = `{"metadata":{},"tool_name":"t","arguments":{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}}`;
        const response = await http(`${base}/api/approvals`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${await subject(ALICE, agent)}`,
            'x-client-assertion': await assertion(),
          },
          body,
        });
        expect(response.status, response.text).toBe(400);
        expect(response.json<{ error: string; details: { field: string }[] }>()).toMatchObject({
          error: 'bad request',
          details: [{ field: 'arguments' }],
        });
      }
      expect(
        (await create(request('deep_enough', { a: JSON.parse(`${'['.repeat(63)}${']'.repeat(63)}`) as unknown })))
          .status,
      ).toBe(201);
    });

    it("answers 401 without either credential or with an invalid one, 403 when the exchange's expression refuses the gateway or the agent is unknown", async () => {
      const body = request('auth_tool');
      const cases: [Promise<HttpResponse>, number, string][] = [
        [create(body, { headers: { 'x-client-assertion': undefined } }), 401, 'unauthorized'],
        [create(body, { headers: { authorization: undefined } }), 401, 'unauthorized'],
        [create(body, { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'unauthorized'],
        [
          create(body, {
            headers: {
              'x-client-assertion': await assertion('gateway-1', { audience: 'https://elsewhere.example.com' }),
            },
          }),
          401,
          'unauthorized',
        ],
        [create(body, { headers: { 'x-client-assertion': 'not.a.jwt' } }), 401, 'unauthorized'],
        [
          create(body, { headers: { authorization: `Bearer ${await subject(ALICE, agent, -600)}` } }),
          401,
          'unauthorized',
        ],
        [
          create(body, {
            headers: { authorization: `Bearer ${await gateway.issuer.sign({ sub: ALICE }, { audience: 'gateway' })}` },
          }),
          401,
          'unauthorized',
        ],
        [
          create(body, { headers: { authorization: `Bearer ${await subject(ALICE, agent, undefined, base)}` } }),
          401,
          'unauthorized',
        ],
        [
          create(body, {
            headers: {
              authorization: `Bearer ${await subject(ALICE, agent, undefined, 'https://other-api.example.com')}`,
            },
          }),
          401,
          'unauthorized',
        ],
        [
          create(body, { headers: { 'x-client-assertion': await assertion('gateway-1', { typ: 'at+jwt' }) } }),
          401,
          'unauthorized',
        ],
        [
          create(body, { headers: { 'x-client-assertion': await assertion('gateway-1', { ttlSeconds: null }) } }),
          401,
          'unauthorized',
        ],
        [create(body, { assertionSub: 'gateway-2' }), 403, 'forbidden'],
        [create(body, { agentId: randomUUID() }), 403, 'forbidden'],
      ];
      for (const [pending, status, error] of cases) {
        const response = await pending;
        expect(response.status, response.text).toBe(status);
        expect(response.json()).toEqual({ error, message: expect.any(String) as string });
      }
    });
  });

  describe('user operations', () => {
    it("lists only the caller's unexpired pending approvals, oldest first", async () => {
      const first = await pending('list_tool');
      const second = await pending('list_tool');
      const bobs = await pending('list_tool', { n: 1 }, { principal: BOB });
      const ids = (await user().get('/api/approvals/pending'))
        .json<{ data: { id: string; status: string }[] }>()
        .data.map((a) => a.id);
      expect(ids.indexOf(first)).toBeLessThan(ids.indexOf(second));
      expect(ids).not.toContain(bobs);
      const bobIds = (await user(BOB).get('/api/approvals/pending'))
        .json<{ data: { id: string }[] }>()
        .data.map((a) => a.id);
      expect(bobIds).toContain(bobs);
      expect(bobIds).not.toContain(first);
    });

    it("answers 404 for another principal's approval on every operation (no existence leak), 400 for a malformed id", async () => {
      const id = await pending('private_tool');
      const bob = user(BOB);
      const unknown = randomUUID();
      for (const target of [id, unknown]) {
        expect((await bob.get(`/api/approvals/${target}`)).status).toBe(404);
        for (const action of ['approve', 'deny', 'revoke', 'scope-preview']) {
          const response = await bob.post(
            `/api/approvals/${target}/${action}`,
            action === 'approve' ? { persistence: 'once' } : {},
          );
          expect(response.status, `${action} ${response.text}`).toBe(404);
          expect(response.json()).toEqual({ error: 'not_found', message: `no approval ${target}` });
        }
      }
      expect((await user().get(`/api/approvals/${id}`)).json<{ data: { status: string } }>().data.status).toBe(
        'pending',
      );
      expect((await bob.get('/api/approvals/not-a-uuid')).json<{ error: string }>().error).toBe('bad request');
      expect((await user(null).get(`/api/approvals/${id}`)).status).toBe(401);
    });

    it('approves once: 200 with the documented shape; only pending can be decided (409 conflict)', async () => {
      const id = await pending('approve_tool');
      const response = await user().post(`/api/approvals/${id}/approve`, { persistence: 'once' });
      expect(response.status, response.text).toBe(200);
      const data = response.json<{ data: Record<string, unknown> }>().data;
      expect(data).toEqual({ id, status: 'approved', persistence: 'once', approved_at: expect.any(String) as string });
      for (const [action, body] of [
        ['approve', { persistence: 'permanent' }],
        ['deny', {}],
        ['scope-preview', {}],
      ] as const) {
        const again = await user().post(`/api/approvals/${id}/${action}`, body);
        expect(again.status, action).toBe(409);
        expect(again.json<{ error: string }>().error).toBe('conflict');
      }
    });

    it('refuses params_pattern with persistence once, even {} (422 invalid_pattern), and changes nothing', async () => {
      const id = await pending('once_tool', { a: 'x' });
      for (const params_pattern of [{}, { a: '*' }]) {
        const response = await user().post(`/api/approvals/${id}/approve`, { persistence: 'once', params_pattern });
        expect(response.status).toBe(422);
        expect(response.json<{ error: string }>().error).toBe('invalid_pattern');
      }
      expect((await user().get(`/api/approvals/${id}`)).json<{ data: { status: string } }>().data.status).toBe(
        'pending',
      );
    });

    it('takes the documented nulls as omitted: params_pattern null is only the reviewed values, metadata.agent_session_id null no session', async () => {
      const id = await pending('null_tool', { a: 'x' }, { metadata: { agent_session_id: null } });
      const response = await user().post(`/api/approvals/${id}/approve`, { persistence: 'once', params_pattern: null });
      expect(response.status, response.text).toBe(200);
      expect((await user().get(`/api/approvals/${id}`)).json<{ data: Record<string, unknown> }>().data).toMatchObject({
        status: 'approved',
        persistence: 'once',
        params_pattern: null,
        agent_session_id: null,
      });
    });

    it('approves permanently with a pattern that covers the reviewed arguments, and lists it with the permanent decisions', async () => {
      const id = await pending('send_email', { to: 'carol@example.com', subject: 'Hi', count: 2 });
      const response = await user().post(`/api/approvals/${id}/approve`, {
        persistence: 'permanent',
        params_pattern: { to: '*@example.com', count: '2' },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.json<{ data: { persistence: string } }>().data.persistence).toBe('permanent');
      const record = (await user().get(`/api/approvals/${id}`)).json<{ data: Record<string, unknown> }>().data;
      expect(record).toMatchObject({
        status: 'approved',
        persistence: 'permanent',
        params_pattern: { to: '*@example.com', count: '2' },
        expires_at: null,
      });
      expect(
        (await user().get('/api/approvals/permanent')).json<{ data: { id: string }[] }>().data.map((a) => a.id),
      ).toContain(id);
      expect(
        (await user(BOB).get('/api/approvals/permanent')).json<{ data: { id: string }[] }>().data.map((a) => a.id),
      ).not.toContain(id);
    });

    const uncovered: [string, Record<string, unknown>][] = [
      ['a glob missing the reviewed value', { to: '*@example.org' }],
      ['an argument the call does not have', { cc: '*' }],
      ['a wildcard on a non-string value', { count: '*' }],
      ['a non-string glob', { to: 5 }],
      ['a glob over 1 KiB', { to: `${'x'.repeat(1025)}` }],
      ['more than 64 entries', Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`a${i}`, '*']))],
    ];
    for (const [name, params_pattern] of uncovered) {
      it(`refuses ${name} with 422 invalid_pattern (approve and scope preview alike)`, async () => {
        const id = await pending('pattern_tool', { to: 'dave@example.com', count: 3 });
        for (const [action, body] of [
          ['approve', { persistence: 'permanent', params_pattern }],
          ['scope-preview', { params_pattern }],
        ] as const) {
          const response = await user().post(`/api/approvals/${id}/${action}`, body);
          expect(response.status, `${action} ${response.text}`).toBe(422);
          expect(response.json<{ error: string; details: unknown[] }>()).toMatchObject({
            error: 'invalid_pattern',
            details: expect.any(Array) as unknown[],
          });
          expect(response.text).not.toContain('dave@example.com');
        }
      });
    }

    it('previews the scope without changing anything: omitted = reviewed values, {} = any arguments', async () => {
      const id = await pending('preview_tool', { path: '/tmp/a.txt', mode: 'r' });
      const preview = async (body: Record<string, unknown>) =>
        (await user().post(`/api/approvals/${id}/scope-preview`, body)).json<{ data: unknown }>().data;
      expect(await preview({})).toEqual({
        tool_pattern: 'preview_tool',
        params_pattern: null,
        preview: 'preview_tool, only with exactly the reviewed arguments',
      });
      // null is documented as omitting it: only the reviewed values.
      expect(await preview({ params_pattern: null })).toEqual({
        tool_pattern: 'preview_tool',
        params_pattern: null,
        preview: 'preview_tool, only with exactly the reviewed arguments',
      });
      expect(await preview({ params_pattern: {} })).toEqual({
        tool_pattern: 'preview_tool',
        params_pattern: {},
        preview: 'preview_tool, with any arguments',
      });
      expect(await preview({ params_pattern: { path: '/tmp/*' } })).toEqual({
        tool_pattern: 'preview_tool',
        params_pattern: { path: '/tmp/*' },
        preview: 'preview_tool, where path matches "/tmp/*"; any other argument may have any value',
      });
      expect(
        (await user().get(`/api/approvals/${id}`)).json<{ data: { status: string; params_pattern: unknown } }>().data,
      ).toMatchObject({ status: 'pending', params_pattern: null });
    });

    it('approves for a session only when the request named an agent session (else 400)', async () => {
      const without = await pending('session_tool');
      const refused = await user().post(`/api/approvals/${without}/approve`, { persistence: 'session' });
      expect(refused.status).toBe(400);
      expect(refused.json<{ error: string }>().error).toBe('bad request');
      const scoped = await pending('session_tool', { n: 2 }, { metadata: { agent_session_id: 'session-a' } });
      expect((await user().post(`/api/approvals/${scoped}/approve`, { persistence: 'session' })).status).toBe(200);
      expect(
        (await user().get(`/api/approvals/${scoped}`)).json<{ data: Record<string, unknown> }>().data,
      ).toMatchObject({ persistence: 'session', agent_session_id: 'session-a' });
    });

    it('denies once or permanently; a permanent denial is listed with the permanent approvals', async () => {
      const once = await pending('deny_tool');
      const forever = await pending('deny_tool');
      const first = await user().post(`/api/approvals/${once}/deny`);
      expect(first.status, first.text).toBe(200);
      expect(first.json<{ data: unknown }>().data).toEqual({
        id: once,
        status: 'denied',
        persistence: 'once',
        denied_at: expect.any(String) as string,
      });
      const second = await user().post(`/api/approvals/${forever}/deny`, { persistence: 'permanent' });
      expect(second.json<{ data: { persistence: string } }>().data.persistence).toBe('permanent');
      const permanent = (await user().get('/api/approvals/permanent')).json<{
        data: { id: string; status: string }[];
      }>().data;
      expect(permanent.find((a) => a.id === forever)?.status).toBe('denied');
      expect(permanent.map((a) => a.id)).not.toContain(once);
      expect((await user().post(`/api/approvals/${forever}/deny`)).status).toBe(409);
      expect(
        (await user().post(`/api/approvals/${once}/deny`, { persistence: 'once' })).json<{ error: string }>().error,
      ).toBe('bad request');
      // An enum refuses null: omitting persistence is how a one-time denial is asked for.
      const nullPersistence = await user().post(`/api/approvals/${await pending('deny_tool')}/deny`, {
        persistence: null,
      });
      expect(nullPersistence.status, nullPersistence.text).toBe(400);
      expect(nullPersistence.json<{ error: string; details: { field: string }[] }>()).toMatchObject({
        error: 'bad request',
        details: [{ field: 'persistence' }],
      });
    });

    it('revokes a permanent approval or denial (repeat: same answer); anything else is 422 not_revocable', async () => {
      const approved = await pending('revoke_tool');
      await user().post(`/api/approvals/${approved}/approve`, { persistence: 'permanent' });
      const revoked = await user().post(`/api/approvals/${approved}/revoke`);
      expect(revoked.status, revoked.text).toBe(200);
      const data = revoked.json<{ data: { revoked_at: string } }>().data;
      expect(data).toEqual({ id: approved, status: 'revoked', revoked_at: expect.any(String) as string });
      expect((await user().post(`/api/approvals/${approved}/revoke`)).json<{ data: unknown }>().data).toEqual(data);
      expect((await user().get(`/api/approvals/${approved}`)).json<{ data: { status: string } }>().data.status).toBe(
        'revoked',
      );
      expect(
        (await user().get('/api/approvals/permanent')).json<{ data: { id: string }[] }>().data.map((a) => a.id),
      ).not.toContain(approved);

      const denied = await pending('revoke_tool');
      await user().post(`/api/approvals/${denied}/deny`, { persistence: 'permanent' });
      expect((await user().post(`/api/approvals/${denied}/revoke`)).status).toBe(200);

      const once = await pending('revoke_tool');
      await user().post(`/api/approvals/${once}/approve`, { persistence: 'once' });
      const still = await pending('revoke_tool');
      for (const id of [once, still]) {
        const response = await user().post(`/api/approvals/${id}/revoke`);
        expect(response.status).toBe(422);
        expect(response.json<{ error: string }>().error).toBe('not_revocable');
      }
    });
  });

  describe('consume', () => {
    const consume = async (id: string, principal = ALICE, agentId = agent, headers: Record<string, string> = {}) =>
      http(`${base}/api/approvals/${id}/consume`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await subject(principal, agentId)}`, ...headers },
      });

    it('consumes an approved one-time approval with the subject token only; again: 200 with the same time', async () => {
      const id = await pending('consume_tool');
      await user().post(`/api/approvals/${id}/approve`, { persistence: 'once' });
      const first = await consume(id);
      expect(first.status, first.text).toBe(200);
      const data = first.json<{ data: { consumed_at: string } }>().data;
      expect(data).toEqual({ id, consumed: true, consumed_at: expect.any(String) as string });
      const again = await consume(id);
      expect(again.status).toBe(200);
      expect(again.json<{ data: unknown }>().data).toEqual(data);
      expect((await user().get(`/api/approvals/${id}`)).json<{ data: Record<string, unknown> }>().data).toMatchObject({
        status: 'approved',
        consumed: true,
        consumed_at: data.consumed_at,
      });
    });

    it('makes exactly one transition under concurrent consumes, answering every one 200', async () => {
      const id = await pending('concurrent_consume');
      await user().post(`/api/approvals/${id}/approve`, { persistence: 'once' });
      const responses = await Promise.all(Array.from({ length: 8 }, () => consume(id)));
      expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(new Set(responses.map((r) => r.json<{ data: { consumed_at: string } }>().data.consumed_at)).size).toBe(1);
      const transitions = broker.logs.records().filter((r) => r.event === 'approval_consumed' && r.approval_id === id);
      expect(transitions).toHaveLength(1);
    });

    it('refuses a subject token addressed to another application or API (401) and consumes nothing', async () => {
      const id = await pending('consume_audience');
      await user().post(`/api/approvals/${id}/approve`, { persistence: 'once' });
      for (const audience of ['https://other-api.example.com', 'another-app', base]) {
        const response = await http(`${base}/api/approvals/${id}/consume`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await subject(ALICE, agent, undefined, audience)}` },
        });
        expect(response.status, audience).toBe(401);
        expect(response.json()).toEqual({ error: 'unauthorized', message: 'the subject token is not valid' });
      }
      expect((await user().get(`/api/approvals/${id}`)).json<{ data: Record<string, unknown> }>().data).toMatchObject({
        status: 'approved',
        consumed: false,
        consumed_at: null,
      });
      expect((await consume(id)).status).toBe(200);
    });

    it("refuses what is not an approved one-time approval (422 not_consumable), another user's or agent's (403), an unknown id (404), no token (401)", async () => {
      const waiting = await pending('consume_refusals');
      const permanent = await pending('consume_refusals');
      await user().post(`/api/approvals/${permanent}/approve`, { persistence: 'permanent' });
      const denied = await pending('consume_refusals');
      await user().post(`/api/approvals/${denied}/deny`);
      for (const id of [waiting, permanent, denied]) {
        const response = await consume(id);
        expect(response.status, response.text).toBe(422);
        expect(response.json<{ error: string }>().error).toBe('not_consumable');
      }
      const once = await pending('consume_refusals');
      await user().post(`/api/approvals/${once}/approve`, { persistence: 'once' });
      expect((await consume(once, BOB)).json<{ error: string }>()).toEqual({
        error: 'forbidden',
        message: 'the approval belongs to another principal',
      });
      expect((await consume(once, ALICE, otherAgent)).status).toBe(403);
      expect((await consume(randomUUID())).status).toBe(404);
      const anonymous = await http(`${base}/api/approvals/${once}/consume`, { method: 'POST' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.json<{ error: string }>().error).toBe('unauthorized');
      expect((await consume(once)).status).toBe(200);
    });
  });

  it('never logs a subject token, client assertion or argument value', () => {
    expect(sentTokens.length).toBeGreaterThan(20);
    expect(broker.logs.leaked([...sentTokens, SECRET_ARGUMENT])).toEqual([]);
    const audit = broker.logs.records().filter((r) => String(r.event).startsWith('approval_'));
    expect(new Set(audit.map((r) => r.event))).toEqual(
      new Set(['approval_created', 'approval_approved', 'approval_denied', 'approval_consumed', 'approval_revoked']),
    );
    expect(audit.every((r) => !('arguments' in r) && !('metadata' in r))).toBe(true);
  });

  it('documents every approvals operation in the OpenAPI contract with the documented security scheme names', () => {
    const document = JSON.parse(readFileSync('openapi/user-api.json', 'utf8')) as {
      paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    const security = (path: string, method: string): string[] =>
      (document.paths[path]?.[method]?.security ?? []).flatMap((entry) => Object.keys(entry));
    expect(security('/api/approvals', 'post')).toEqual(['BearerSubjectTokenClientAssertion']);
    expect(security('/api/approvals', 'get')).toEqual(['ClientAssertion']);
    expect(security('/api/approvals/{id}/consume', 'post')).toEqual(['BearerSubjectToken']);
    for (const [path, method] of [
      ['/api/approvals/pending', 'get'],
      ['/api/approvals/permanent', 'get'],
      ['/api/approvals/{id}', 'get'],
      ['/api/approvals/{id}/approve', 'post'],
      ['/api/approvals/{id}/scope-preview', 'post'],
      ['/api/approvals/{id}/deny', 'post'],
      ['/api/approvals/{id}/revoke', 'post'],
    ] as const) {
      expect(security(path, method), `${method} ${path}`).toEqual(['PrincipalHeader']);
    }
    expect(Object.keys(document.components.securitySchemes)).toEqual(
      expect.arrayContaining([
        'PrincipalHeader',
        'BearerSubjectToken',
        'ClientAssertion',
        'BearerSubjectTokenClientAssertion',
      ]),
    );
  });

  it('stops start-up naming the key for a default long-poll timeout outside 1-120 s or a bad sync expression', async () => {
    await expect(
      startTestBroker({ servers: BOTH_SERVERS, config: { approvals: { sync: { default_timeout: '121s' } } } }),
    ).rejects.toThrow(
      'config error: approvals.sync.default_timeout must be a whole number of seconds from 1s to 120s (the X-Long-Poll-Timeout range)',
    );
    await expect(
      startTestBroker({
        servers: BOTH_SERVERS,
        config: { approvals: { sync: { authorization: { cel: { expression: 'client_assertion.sub ==' } } } } },
      }),
    ).rejects.toThrow('config error: approvals.sync.authorization.cel.expression is not a valid CEL expression');
  });
});
