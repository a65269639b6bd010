import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { LongPollHub } from '@broker/approvals';
import {
  eventually,
  ApiClient,
  http,
  startGatewayFixture,
  startJwtIssuer,
  type HttpResponse,
  type TestJwtIssuer,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

interface Summary {
  id: string;
  tool_name: string;
  arguments_hash: string;
  tool_pattern: string;
  params_pattern: Record<string, string> | null;
  status: string;
  persistence: string | null;
  consumed: boolean;
  agent_session_id: string | null;
  approved_at: string | null;
}

interface SyncBody {
  data: { pairs: { principal: string; agent_id: string; approvals: Summary[] }[] };
}

/** A broker with a gateway trust anchor, and the calls a gateway and a user make. */
async function approvalsBroker(
  issuer: TestJwtIssuer,
  config: { approvals?: Record<string, unknown>; shutdownTimeout?: string } = {},
) {
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    issuer,
    subjectAudience: 'gateway',
    config: {
      server: { shutdown: { timeout: config.shutdownTimeout ?? '5s' } },
      approvals: config.approvals ?? {
        sync: { authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } } },
      },
    },
  });
  const { broker, base } = gateway;
  const admin = new ApiClient(broker.url('admin'));
  const newAgent = async (): Promise<string> =>
    (await grantedAgent({ admin: admin.baseUrl, enduser: base }, [ALICE, BOB], 'Agent')).id;
  const assertion = (sub = 'gateway-1') => gateway.assertion({ sub });
  const subject = (principal: string, agentId: string) => gateway.subjectToken(principal, agentId);
  const create = async (
    agentId: string,
    tool: string,
    args: Record<string, unknown>,
    metadata: Record<string, unknown> = {},
    principal = ALICE,
  ): Promise<string> => {
    const response = await http(`${base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await subject(principal, agentId)}`,
        'x-client-assertion': await assertion(),
      },
      body: JSON.stringify({ metadata, tool_name: tool, arguments: args }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  };
  const sync = async (query = '', headers: Record<string, string> = {}): Promise<HttpResponse> =>
    http(`${base}/api/approvals${query}`, { headers: { 'x-client-assertion': await assertion(), ...headers } });
  const hub = (): LongPollHub => broker.broker.server('enduser').app.get(LongPollHub);
  return {
    broker,
    base,
    newAgent,
    assertion,
    subject,
    create,
    sync,
    hub,
    user: (principal = ALICE) => new ApiClient(base, principal),
  };
}

describe('approvals sync (long-poll)', () => {
  let issuer: TestJwtIssuer;
  let env: Awaited<ReturnType<typeof approvalsBroker>>;
  let agent: string;
  const forAlice = `?principal=${encodeURIComponent(ALICE)}`;

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    env = await approvalsBroker(issuer);
    agent = await env.newAgent();
  });

  afterAll(async () => {
    await env?.broker.stop();
    await issuer?.stop();
  });

  const etag = (response: HttpResponse): string => response.headers.etag as string;

  it('lists every active approval grouped by (principal, agent) with ETag "v<N>", as the documented summary', async () => {
    const other = await env.newAgent();
    const args = { to: 'x@example.com', n: 1 };
    const waiting = await env.create(agent, 'send_email', args);
    const approved = await env.create(agent, 'read_file', { path: '/a' });
    await env
      .user()
      .post(`/api/approvals/${approved}/approve`, { persistence: 'permanent', params_pattern: { path: '/*' } });
    const elsewhere = await env.create(other, 'send_email', args);
    await env.create(agent, 'send_email', args, {}, BOB);

    const response = await env.sync(forAlice);
    expect(response.status, response.text).toBe(200);
    expect(etag(response)).toMatch(/^"v\d+"$/);
    expect(response.headers['cache-control']).toBe('no-store');
    const pairs = response.json<SyncBody>().data.pairs;
    expect(pairs.every((pair) => pair.principal === ALICE)).toBe(true);
    const mine = pairs.find((pair) => pair.agent_id === agent);
    expect(mine?.approvals.map((a) => a.id)).toEqual([waiting, approved]);
    expect(pairs.find((pair) => pair.agent_id === other)?.approvals.map((a) => a.id)).toEqual([elsewhere]);
    expect(mine?.approvals[0]).toEqual({
      id: waiting,
      tool_name: 'send_email',
      arguments_hash: createHash('sha256').update('{"n":1,"to":"x@example.com"}').digest('hex'),
      tool_pattern: 'send_email',
      params_pattern: null,
      status: 'pending',
      persistence: null,
      consumed: false,
      agent_session_id: null,
      approved_at: null,
    });
    expect(mine?.approvals[1]).toMatchObject({
      status: 'approved',
      persistence: 'permanent',
      params_pattern: { path: '/*' },
      approved_at: expect.any(String) as string,
    });

    const everyone = (await env.sync()).json<SyncBody>().data.pairs.map((pair) => pair.principal);
    expect(everyone).toEqual(expect.arrayContaining([ALICE, BOB]));
  });

  it('answers 304 with the same ETag after X-Long-Poll-Timeout: 1 when nothing changed', async () => {
    const current = etag(await env.sync(forAlice));
    const held = env.hub().held;
    const pending = env.sync(forAlice, { 'if-none-match': current, 'x-long-poll-timeout': '1' });
    // Held, not answered at once.
    expect(await eventually(() => env.hub().held === held + 1)).toBe(true);
    const response = await pending;
    expect(response.status).toBe(304);
    expect(response.text).toBe('');
    expect(etag(response)).toBe(current);
    expect(env.hub().held).toBe(held);
  });

  it('answers at once (200) without If-None-Match or with a stale one', async () => {
    const current = etag(await env.sync(forAlice));
    const stale = await env.sync(forAlice, { 'if-none-match': '"v0"', 'x-long-poll-timeout': '120' });
    expect(stale.status).toBe(200);
    expect(etag(stale)).toBe(current);
  });

  for (const value of ['0', '121', 'abc', '1.5', '']) {
    it(`refuses X-Long-Poll-Timeout: ${JSON.stringify(value)} with 400 bad request`, async () => {
      const response = await env.sync(forAlice, { 'if-none-match': '"v1"', 'x-long-poll-timeout': value });
      expect(response.status).toBe(400);
      expect(response.json<{ error: string; message: string }>()).toMatchObject({
        error: 'bad request',
        message: 'X-Long-Poll-Timeout must be an integer from 1 to 120 (seconds)',
      });
    });
  }

  it('wakes a held waiter in under 1 s when an approval changes, with the new state and ETag', async () => {
    const id = await env.create(agent, 'wake_tool', { q: 1 });
    const current = etag(await env.sync(forAlice));
    const waiting = env.sync(forAlice, { 'if-none-match': current, 'x-long-poll-timeout': '30' });
    expect(await eventually(() => env.hub().held === 1)).toBe(true);
    const changedAt = performance.now();
    expect((await env.user().post(`/api/approvals/${id}/approve`, { persistence: 'once' })).status).toBe(200);
    const response = await waiting;
    const wokeAfterMs = performance.now() - changedAt;
    expect(response.status).toBe(200);
    expect(etag(response)).not.toBe(current);
    const summary = response
      .json<SyncBody>()
      .data.pairs.flatMap((pair) => pair.approvals)
      .find((a) => a.id === id);
    expect(summary).toMatchObject({ status: 'approved', persistence: 'once', consumed: false });
    expect(wokeAfterMs).toBeLessThan(1_000);
  });

  it('matches If-None-Match weakly, in a list, and *', async () => {
    const current = etag(await env.sync(forAlice));
    const headers = [`W/${current}`, `"v0", ${current}`, '*'];
    const responses = await Promise.all(
      headers.map((header) => env.sync(forAlice, { 'if-none-match': header, 'x-long-poll-timeout': '1' })),
    );
    expect(responses.map((response) => response.status)).toEqual([304, 304, 304]);
  });

  it('lists session approvals only for a matching agent_session_id; consumed and revoked approvals leave the state', async () => {
    const sessionAgent = await env.newAgent();
    const scoped = await env.create(sessionAgent, 'session_tool', { a: 1 }, { agent_session_id: 'sess-1' });
    await env.user().post(`/api/approvals/${scoped}/approve`, { persistence: 'session' });
    const ids = async (query: string) =>
      (await env.sync(query)).json<SyncBody>().data.pairs.flatMap((pair) => pair.approvals.map((a) => a.id));
    expect(await ids(forAlice)).not.toContain(scoped);
    expect(await ids(`${forAlice}&agent_session_id=other`)).not.toContain(scoped);
    expect(await ids(`${forAlice}&agent_session_id=other&agent_session_id=sess-1`)).toContain(scoped);

    const once = await env.create(sessionAgent, 'once_tool', { a: 2 });
    await env.user().post(`/api/approvals/${once}/approve`, { persistence: 'once' });
    const permanent = await env.create(sessionAgent, 'permanent_tool', { a: 3 });
    await env.user().post(`/api/approvals/${permanent}/deny`, { persistence: 'permanent' });
    expect(await ids(forAlice)).toEqual(expect.arrayContaining([once, permanent]));
    await http(`${env.base}/api/approvals/${once}/consume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await env.subject(ALICE, sessionAgent)}` },
    });
    await env.user().post(`/api/approvals/${permanent}/revoke`);
    const after = await ids(forAlice);
    expect(after).not.toContain(once);
    expect(after).not.toContain(permanent);
  });

  it('authenticates the sync by the client assertion alone (X-Client-Assertion or Bearer) and its own expression', async () => {
    const anonymous = await http(`${env.base}/api/approvals${forAlice}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json<{ error: string }>().error).toBe('unauthorized');
    const asBearer = await http(`${env.base}/api/approvals${forAlice}`, {
      headers: { authorization: `Bearer ${await env.assertion()}` },
    });
    expect(asBearer.status).toBe(200);
    const refused = await http(`${env.base}/api/approvals${forAlice}`, {
      headers: { 'x-client-assertion': await env.assertion('gateway-2') },
    });
    expect(refused.status).toBe(403);
    expect(refused.json<{ error: string }>().error).toBe('forbidden');
    const subjectInstead = await http(`${env.base}/api/approvals${forAlice}`, {
      headers: { 'x-client-assertion': await env.subject(ALICE, agent) },
    });
    expect(subjectInstead.status).toBe(401);
    expect((await env.sync('?principal=')).status).toBe(400);
    expect((await env.sync(`${forAlice}&unknown=1`)).status).toBe(400);
  });

  it('frees the waiter of a client that disconnects at once', async () => {
    const current = etag(await env.sync(forAlice));
    const hub = env.hub();
    const before = hub.held;
    const assertion = await env.assertion();
    const request = httpRequest(`${env.base}/api/approvals${forAlice}`, {
      headers: { 'x-client-assertion': assertion, 'if-none-match': current, 'x-long-poll-timeout': '120' },
      agent: false,
    });
    request.on('error', () => undefined);
    request.end();
    expect(await eventually(() => hub.held === before + 1)).toBe(true);
    request.destroy();
    expect(await eventually(() => hub.held === before)).toBe(true);
    expect(env.broker.broker.runtime.lifecycle.inFlightRequests).toBe(0);
  });

  it('wakes the waiters when a pending request expires (the expiry is a change)', async () => {
    const short = await approvalsBroker(issuer, {
      approvals: { pending_ttl: '2s', sync: { authorization: { cel: { expression: 'true' } } } },
    });
    try {
      const id = await short.create(await short.newAgent(), 'expiring_tool', { a: 1 });
      const before = await short.sync(forAlice);
      expect(before.json<SyncBody>().data.pairs[0]?.approvals.map((a) => a.id)).toEqual([id]);
      const response = await short.sync(forAlice, { 'if-none-match': etag(before), 'x-long-poll-timeout': '30' });
      expect(response.status).toBe(200);
      expect(etag(response)).not.toBe(etag(before));
      expect(response.json<SyncBody>().data.pairs).toEqual([]);
      expect((await short.user().get(`/api/approvals/${id}`)).json<{ error: string }>().error).toBe('gone');
    } finally {
      await short.broker.stop();
    }
  });

  it('answers held waiters at once on shutdown (304, connection closing), so the drain does not wait for them', async () => {
    const stopping = await approvalsBroker(issuer, { shutdownTimeout: '30s' });
    const current = etag(await stopping.sync(forAlice));
    const held = Array.from({ length: 3 }, () =>
      stopping.sync(forAlice, { 'if-none-match': current, 'x-long-poll-timeout': '120' }),
    );
    expect(await eventually(() => stopping.hub().held === 3)).toBe(true);
    await stopping.broker.stop();
    for (const response of await Promise.all(held)) {
      expect(response.status).toBe(304);
      expect(response.headers.connection).toBe('close');
      expect(etag(response)).toBe(current);
    }
    const messages = stopping.broker.logs.records().map((record) => record.msg);
    expect(messages).toContain('shutdown complete');
    expect(messages).not.toContain('shutdown timeout reached: closing remaining connections');
  });
});
