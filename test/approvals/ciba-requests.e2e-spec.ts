import { CibaRequests, type CibaRequestInput, type CibaRequester } from '@broker/approvals';
import { canonicalJson } from '@broker/approvals';
import {
  ApiClient,
  FrozenClock,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent, type GrantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const MCP = 'https://mcp.example.com/mcp';

interface Row {
  status: string;
  persistence: string | null;
  consumed: boolean;
  listed: boolean;
  ciba_interval_ms: number;
  ciba_token_issued_at: Date | null;
  binding_message: string | null;
  authorization_details: string;
  scopes: string;
  ciba_requester: string;
}

interface ActivityItem {
  type: string;
  actor: { type: string; id: string | null };
  details: Record<string, unknown>;
}

function detailOf(tool: string, args: Record<string, unknown>, risk?: 'low' | 'medium' | 'critical') {
  const entry = {
    type: 'urn:agent-identity-broker:tool-call',
    locations: [MCP],
    tool,
    arguments: args,
    ...(risk === undefined ? {} : { risk }),
  };
  return { tool, arguments: args, risk, json: JSON.stringify(entry) };
}

/**
 * `CibaRequests` (docs/ciba.md) through the running app on each database backend: a backchannel
 * request is an approval row that the person decides through the approvals API, polled under
 * the interval rule, answered once; remembered decisions, limits, events and the gateways'
 * consume refusal as for any approval. The clock is frozen so the interval and expiry are exact.
 */
describe.each(testBackends())('CIBA requests as approvals ($name)', (backend) => {
  let gateway: GatewayFixture;
  let base: string;
  let ciba: CibaRequests;
  const clock = new FrozenClock(new Date());

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      clock,
      subjectAudience: 'gateway',
      gatewaySub: 'gateway',
      ttlSeconds: 3600,
      config: { approvals: { rate_limit: { max_pending_per_pair: 4, max_requests_per_minute: 5 } } },
    });
    base = gateway.base;
    ciba = gateway.broker.broker.server('enduser').app.get(CibaRequests);
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const newAgent = (principals: readonly string[] = [ALICE]): Promise<GrantedAgent> =>
    grantedAgent({ admin: gateway.broker.url('admin'), enduser: base }, principals, 'Payments Agent');

  const input = (agentId: string, over: Partial<CibaRequestInput> = {}): CibaRequestInput => ({
    principal: ALICE,
    agentId,
    requester: 'agent',
    detail: detailOf('send_payment', { to: 'acme@example.com', amount_eur: 120 }, 'critical'),
    bindingMessage: 'BLUE-42',
    scopes: [],
    expiresInMs: 600_000,
    intervalMs: 5_000,
    ...over,
  });

  async function created(agentId: string, over: Partial<CibaRequestInput> = {}) {
    const outcome = await ciba.request(input(agentId, over));
    if (outcome.kind !== 'created') throw new Error(`not created: ${JSON.stringify(outcome)}`);
    return outcome;
  }

  const row = async (id: string): Promise<Row> =>
    (
      await gateway.broker.broker.runtime.database.dataSource.query<Row[]>('SELECT * FROM approvals WHERE id = $1', [
        id,
      ])
    )[0] as Row;

  const alice = () => new ApiClient(base, ALICE);

  async function syncEtag(): Promise<string | undefined> {
    const response = await http(`${base}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
      headers: { 'x-client-assertion': await gateway.assertion() },
    });
    expect(response.status, response.text).toBe(200);
    return response.headers.etag;
  }

  async function activity(id: string): Promise<ActivityItem[]> {
    const response = await alice().get('/api/activity?limit=100');
    expect(response.status, response.text).toBe(200);
    return response.json<{ data: ActivityItem[] }>().data.filter((event) => event.details.approval_id === id);
  }

  it('creates a pending approval row holding the request; only the SHA-256 of the auth_req_id is stored', async () => {
    const agent = await newAgent();
    const outcome = await created(agent.id, { scopes: ['notes.read'], expiresInMs: 120_000, intervalMs: 7_000 });
    expect(outcome.authReqId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(outcome.expiresIn).toBe(120);
    expect(outcome.interval).toBe(7);
    const stored = await row(outcome.approvalId);
    expect(stored).toMatchObject({
      status: 'pending',
      persistence: null,
      listed: true,
      binding_message: 'BLUE-42',
      authorization_details: input(agent.id).detail.json,
      scopes: 'notes.read',
      ciba_requester: 'agent',
      ciba_interval_ms: 7_000,
    });
    const dump = JSON.stringify(
      await gateway.broker.broker.runtime.database.dataSource.query('SELECT * FROM approvals WHERE id = $1', [
        outcome.approvalId,
      ]),
    );
    expect(dump).not.toContain(outcome.authReqId);
    const view = await alice().get(`/api/approvals/${outcome.approvalId}`);
    expect(view.status, view.text).toBe(200);
    expect(view.json<{ data: Record<string, unknown> }>().data).toMatchObject({
      status: 'pending',
      tool_name: 'send_payment',
      arguments: { to: 'acme@example.com', amount_eur: 120 },
      risk_level: 'critical',
      agent_session_id: null,
      requested_via: 'ciba',
      binding_message: 'BLUE-42',
      authorization_details: [JSON.parse(input(agent.id).detail.json)],
      // No MCP server is registered at the entry's location in this test.
      mcp_server_display_name: null,
    });
  });

  it("names the MCP server as registered, and shows a gateway's request as before (requested_via gateway, nulls)", async () => {
    const agent = await newAgent();
    const resource = await new ApiClient(gateway.broker.url('admin')).post('/api/resources', {
      display_name: 'Payments',
      resource_uri: 'https://payments-view.example.com/mcp',
      scopes: [{ scope: 'payments.send', description: 'Send payments' }],
    });
    expect(resource.status, resource.text).toBe(201);
    const entry = {
      ...(JSON.parse(input(agent.id).detail.json) as Record<string, unknown>),
      locations: ['https://payments-view.example.com/mcp'],
    };
    const { approvalId } = await created(agent.id, {
      detail: { ...input(agent.id).detail, json: JSON.stringify(entry) },
      bindingMessage: undefined,
    });
    const pending = (await alice().get('/api/approvals/pending')).json<{ data: Record<string, unknown>[] }>().data;
    expect(pending.find((view) => view.id === approvalId)).toMatchObject({
      requested_via: 'ciba',
      binding_message: null,
      mcp_server_display_name: 'Payments',
    });
    const asked = await http(`${base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await gateway.subjectToken(ALICE, agent.id)}`,
        'x-client-assertion': await gateway.assertion(),
      },
      body: JSON.stringify({ metadata: {}, tool_name: 'send_payment', arguments: { to: 'acme@example.com' } }),
    });
    expect(asked.status, asked.text).toBe(201);
    const view = await alice().get(`/api/approvals/${asked.json<{ data: { id: string } }>().data.id}`);
    expect(view.json<{ data: Record<string, unknown> }>().data).toMatchObject({
      requested_via: 'gateway',
      binding_message: null,
      authorization_details: null,
      mcp_server_display_name: null,
    });
  });

  it('refuses a person without an active grant for the agent, and one who revoked it, alike', async () => {
    const agent = await newAgent([ALICE]);
    expect(await ciba.request(input(agent.id, { principal: BOB }))).toEqual({ kind: 'no_grant' });
    await agent.revoke(ALICE);
    expect(await ciba.request(input(agent.id))).toEqual({ kind: 'no_grant' });
  });

  it('answers pending, then slow_down for a poll inside the interval (which grows by 5 s for good), then pending again in time', async () => {
    const agent = await newAgent();
    const { authReqId, approvalId } = await created(agent.id);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'pending' });
    clock.advance(4_000);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'slow_down', interval: 10 });
    expect((await row(approvalId)).ciba_interval_ms).toBe(10_000);
    // The interval counts from the last in-time poll (4 s + 5.5 s = 9.5 s after it: still too early for 10 s).
    clock.advance(5_500);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'slow_down', interval: 15 });
    clock.advance(5_300);
    // 14.8 s after the last in-time poll: within the 250 ms allowance of 15 s.
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'pending' });
    clock.advance(14_000);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'slow_down', interval: 20 });
  });

  it('answers invalid for an unknown auth_req_id, another agent, or another kind of requester, without touching the row', async () => {
    const agent = await newAgent();
    const other = await newAgent();
    const { authReqId, approvalId } = await created(agent.id, { requester: { gateway: 'gateway' } });
    const before = await row(approvalId);
    expect(await ciba.poll('A'.repeat(43), agent.id, { gateway: 'gateway' })).toEqual({ kind: 'invalid' });
    expect(await ciba.poll(authReqId, other.id, { gateway: 'gateway' })).toEqual({ kind: 'invalid' });
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'invalid' });
    expect(await ciba.poll(authReqId, agent.id, { gateway: 'another-gateway' })).toEqual({ kind: 'invalid' });
    expect(await row(approvalId)).toEqual(before);
    expect(await ciba.poll(authReqId, agent.id, { gateway: 'gateway' })).toEqual({ kind: 'pending' });
  });

  it('answers approved exactly once after the person approves once; the row is consumed and later polls are invalid', async () => {
    const agent = await newAgent();
    const { authReqId, approvalId } = await created(agent.id, { scopes: ['notes.read'] });
    const approved = await alice().post(`/api/approvals/${approvalId}/approve`, { persistence: 'once' });
    expect(approved.status, approved.text).toBe(200);
    const answer = await ciba.poll(authReqId, agent.id, 'agent');
    expect(answer).toEqual({
      kind: 'approved',
      principal: ALICE,
      agentId: agent.id,
      authorizationDetailsJson: input(agent.id).detail.json,
      scopes: ['notes.read'],
    });
    expect(await row(approvalId)).toMatchObject({ status: 'approved', consumed: true, listed: false });
    clock.advance(60_000);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'invalid' });
    const events = await activity(approvalId);
    expect(events.map((event) => event.type).sort()).toEqual([
      'approval.approved',
      'approval.consumed',
      'approval.requested',
    ]);
    expect(events.find((event) => event.type === 'approval.requested')?.actor).toEqual({
      type: 'agent',
      id: agent.id,
    });
    expect(events.find((event) => event.type === 'approval.consumed')?.actor).toEqual({ type: 'agent', id: agent.id });
  });

  it('gives the token once when two polls race (one winner)', async () => {
    const agent = await newAgent();
    const { authReqId, approvalId } = await created(agent.id);
    expect((await alice().post(`/api/approvals/${approvalId}/approve`, { persistence: 'once' })).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 4 }, () => ciba.poll(authReqId, agent.id, 'agent')));
    expect(answers.filter((answer) => answer.kind === 'approved')).toHaveLength(1);
    for (const answer of answers.filter((a) => a.kind !== 'approved'))
      expect(['invalid', 'slow_down']).toContain(answer.kind);
  });

  it('answers denied after the person denies, and after the person revokes the agent', async () => {
    const agent = await newAgent();
    const first = await created(agent.id);
    expect((await alice().post(`/api/approvals/${first.approvalId}/deny`)).status).toBe(200);
    expect(await ciba.poll(first.authReqId, agent.id, 'agent')).toEqual({ kind: 'denied' });
    const second = await created(agent.id, { detail: detailOf('send_payment', { to: 'b@example.com' }) });
    await agent.revoke(ALICE);
    clock.advance(10_000);
    expect(await ciba.poll(second.authReqId, agent.id, 'agent')).toEqual({ kind: 'denied' });
  });

  it('answers expired past the request expiry, and the approval page answers 410 gone', async () => {
    const agent = await newAgent();
    const { authReqId, approvalId } = await created(agent.id, { expiresInMs: 60_000 });
    clock.advance(59_000);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'pending' });
    clock.advance(1_000);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'expired' });
    const page = await alice().get(`/api/approvals/${approvalId}`);
    expect(page.status, page.text).toBe(410);
    // The sync sweeps first: the request expires as any other, with its event (the broker's own work).
    await syncEtag();
    expect((await row(approvalId)).status).toBe('expired');
    const expired = (await activity(approvalId)).filter((event) => event.type === 'approval.expired');
    expect(expired.map((event) => event.actor)).toEqual([{ type: 'broker', id: null }]);
  });

  it('answers expired for a request approved but never polled before its expiry', async () => {
    const agent = await newAgent();
    const { authReqId, approvalId } = await created(agent.id, { expiresInMs: 60_000 });
    expect((await alice().post(`/api/approvals/${approvalId}/approve`, { persistence: 'permanent' })).status).toBe(200);
    clock.advance(61_000);
    expect(await ciba.poll(authReqId, agent.id, 'agent')).toEqual({ kind: 'expired' });
  });

  it('answers at once from a remembered permanent approval whose pattern covers the call, and a covering permanent denial wins', async () => {
    const agent = await newAgent();
    const first = await created(agent.id, {
      detail: detailOf('send_payment', { to: 'acme@example.com', amount_eur: 120 }),
    });
    // Asked before the pattern was remembered, so it waits for the person (who will deny it for good).
    const denied = await created(agent.id, { detail: detailOf('send_payment', { to: 'x@example.com' }) });
    const remembered = await alice().post(`/api/approvals/${first.approvalId}/approve`, {
      persistence: 'permanent',
      params_pattern: { to: '*@example.com' },
    });
    expect(remembered.status, remembered.text).toBe(200);
    // Its own token, once; the permanent approval stays remembered.
    expect((await ciba.poll(first.authReqId, agent.id, 'agent')).kind).toBe('approved');
    expect(await row(first.approvalId)).toMatchObject({ status: 'approved', persistence: 'permanent', listed: true });

    const covered = await created(agent.id, {
      detail: detailOf('send_payment', { to: 'billing@example.com', amount_eur: 9 }),
    });
    expect(await row(covered.approvalId)).toMatchObject({ status: 'approved', persistence: 'once' });
    expect(await ciba.poll(covered.authReqId, agent.id, 'agent')).toMatchObject({ kind: 'approved' });
    const answered = (await activity(covered.approvalId)).find((event) => event.type === 'approval.approved');
    expect(answered?.actor).toEqual({ type: 'broker', id: null });
    expect(answered?.details.remembered_approval_id).toBe(first.approvalId);

    const outside = await created(agent.id, {
      detail: detailOf('send_payment', { to: 'mallory@evil.example', amount_eur: 9 }),
    });
    expect(await ciba.poll(outside.authReqId, agent.id, 'agent')).toEqual({ kind: 'pending' });

    // A permanent denial of exactly these arguments wins over the covering approval.
    expect((await alice().post(`/api/approvals/${denied.approvalId}/deny`, { persistence: 'permanent' })).status).toBe(
      200,
    );
    clock.advance(61_000);
    const again = await created(agent.id, { detail: detailOf('send_payment', { to: 'x@example.com' }) });
    expect(await row(again.approvalId)).toMatchObject({ status: 'denied', persistence: 'once' });
    expect(await ciba.poll(again.authReqId, agent.id, 'agent')).toEqual({ kind: 'denied' });
    const deniedEvent = (await activity(again.approvalId)).find((event) => event.type === 'approval.denied');
    expect(deniedEvent?.details.remembered_approval_id).toBe(denied.approvalId);
  });

  it('a remembered decision of the gateways answers a CIBA request too; session approvals never do', async () => {
    const agent = await newAgent();
    const create = async (args: Record<string, unknown>, metadata: Record<string, unknown> = {}) => {
      const response = await http(`${base}/api/approvals`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await gateway.subjectToken(ALICE, agent.id)}`,
          'x-client-assertion': await gateway.assertion(),
        },
        body: JSON.stringify({ metadata, tool_name: 'delete_file', arguments: args }),
      });
      expect(response.status, response.text).toBe(201);
      return response.json<{ data: { id: string } }>().data.id;
    };
    const permanent = await create({ path: '/tmp/a' });
    expect((await alice().post(`/api/approvals/${permanent}/approve`, { persistence: 'permanent' })).status).toBe(200);
    const session = await create({ path: '/tmp/b' }, { agent_session_id: 's-1' });
    expect((await alice().post(`/api/approvals/${session}/approve`, { persistence: 'session' })).status).toBe(200);
    clock.advance(61_000);
    const exact = await created(agent.id, { detail: detailOf('delete_file', { path: '/tmp/a' }) });
    expect((await row(exact.approvalId)).status).toBe('approved');
    const sessionCovered = await created(agent.id, { detail: detailOf('delete_file', { path: '/tmp/b' }) });
    expect((await row(sessionCovered.approvalId)).status).toBe('pending');
  });

  it('refuses session persistence for a CIBA request and the gateways consume of it (422 not_consumable)', async () => {
    const agent = await newAgent();
    const { approvalId } = await created(agent.id);
    const session = await alice().post(`/api/approvals/${approvalId}/approve`, { persistence: 'session' });
    expect(session.status, session.text).toBe(400);
    expect((await alice().post(`/api/approvals/${approvalId}/approve`, { persistence: 'once' })).status).toBe(200);
    const consume: HttpResponse = await http(`${base}/api/approvals/${approvalId}/consume`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await gateway.subjectToken(ALICE, agent.id)}`,
        'x-client-assertion': await gateway.assertion(),
      },
    });
    expect(consume.status, consume.text).toBe(422);
    expect(consume.json()).toEqual({
      error: 'not_consumable',
      message: 'a backchannel request is used at the token endpoint',
    });
    expect(await row(approvalId)).toMatchObject({ consumed: false, listed: true });
  });

  it('counts CIBA requests in the approvals limits of the person and agent', async () => {
    const agent = await newAgent();
    for (let i = 0; i < 4; i += 1) await created(agent.id, { detail: detailOf('send_payment', { i }) });
    const pending = await ciba.request(input(agent.id, { detail: detailOf('send_payment', { i: 4 }) }));
    expect(pending).toMatchObject({ kind: 'rate_limited', limit: 'pending' });
    clock.advance(61_000);
    const other = await newAgent();
    for (let i = 0; i < 4; i += 1) await created(other.id, { detail: detailOf('t', { i }) });
    // Denying two frees pending places; the fifth creation of the minute is allowed, the sixth is not.
    const pendingList = await alice().get('/api/approvals/pending');
    const ofOther = pendingList
      .json<{ data: { id: string; agent_id: string }[] }>()
      .data.filter((approval) => approval.agent_id === other.id);
    expect(ofOther).toHaveLength(4);
    for (const approval of ofOther.slice(0, 2))
      expect((await alice().post(`/api/approvals/${approval.id}/deny`)).status).toBe(200);
    await created(other.id, { detail: detailOf('t', { i: 4 }) });
    const rate = await ciba.request(input(other.id, { detail: detailOf('t', { i: 5 }) }));
    expect(rate).toMatchObject({ kind: 'rate_limited', limit: 'rate' });
    expect(rate.kind === 'rate_limited' && rate.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('polling changes nothing the gateways sync: the ETag stays while a request is polled', async () => {
    const agent = await newAgent();
    const { authReqId } = await created(agent.id);
    const before = await syncEtag();
    for (let i = 0; i < 3; i += 1) {
      await ciba.poll(authReqId, agent.id, 'agent');
      clock.advance(i === 1 ? 1_000 : 6_000);
    }
    expect(await syncEtag()).toBe(before);
  });

  it('stores the entry exactly as given (canonical JSON in, same text out)', async () => {
    const agent = await newAgent();
    const args = { b: [1, { z: 'ü\u2028' }], a: null };
    const json = canonicalJson({
      type: 'urn:agent-identity-broker:tool-call',
      locations: [MCP],
      tool: 't',
      arguments: args,
    });
    const { authReqId, approvalId } = await created(agent.id, {
      detail: { tool: 't', arguments: args, risk: undefined, json },
    });
    expect((await alice().post(`/api/approvals/${approvalId}/approve`, { persistence: 'once' })).status).toBe(200);
    const answer = await ciba.poll(authReqId, agent.id, 'agent');
    expect(answer.kind === 'approved' && answer.authorizationDetailsJson).toBe(json);
  });
});

/** Keeps the requester type in use for the reader: a gateway's sub too long for the column still round-trips. */
const LONG_GATEWAY: CibaRequester = { gateway: 'g'.repeat(300) };
describe('CIBA requester kept as a digest when long', () => {
  it('polls a request made by a gateway whose sub is longer than the column', async () => {
    const gateway = await startGatewayFixture({ servers: BOTH_SERVERS });
    try {
      const ciba = gateway.broker.broker.server('enduser').app.get(CibaRequests);
      const agent = await grantedAgent({ admin: gateway.broker.url('admin'), enduser: gateway.base }, [ALICE]);
      const outcome = await ciba.request({
        principal: ALICE,
        agentId: agent.id,
        requester: LONG_GATEWAY,
        detail: detailOf('t', {}),
        bindingMessage: undefined,
        scopes: [],
        expiresInMs: 60_000,
        intervalMs: 5_000,
      });
      expect(outcome.kind).toBe('created');
      if (outcome.kind !== 'created') return;
      expect(await ciba.poll(outcome.authReqId, agent.id, LONG_GATEWAY)).toEqual({ kind: 'pending' });
      expect(await ciba.poll(outcome.authReqId, agent.id, { gateway: 'g'.repeat(299) })).toEqual({ kind: 'invalid' });
    } finally {
      await gateway.stop();
    }
  });
});
