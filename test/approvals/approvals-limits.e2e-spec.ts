import {
  ApiClient,
  FrozenClock,
  http,
  startGatewayFixture,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const TTL_MS = 10 * 60_000;

/**
 * Time-dependent rules on an injected frozen clock: pending expiry (410 gone) and the
 * creation limits (429 with Retry-After). The gateway's JWTs are signed for an hour so
 * that moving the clock never expires them.
 */
describe('approvals over time (frozen clock)', () => {
  let gateway: GatewayFixture;
  let broker: TestBroker;
  let base: string;
  let admin: ApiClient;
  const clock = new FrozenClock(new Date());

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      clock,
      subjectAudience: 'gateway',
      gatewaySub: 'gateway',
      ttlSeconds: 3600,
    });
    ({ broker, base } = gateway);
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const newAgent = async (): Promise<string> =>
    (await grantedAgent({ admin: admin.baseUrl, enduser: base }, [ALICE], 'Agent')).id;
  const subject = (agentId: string) => gateway.subjectToken(ALICE, agentId);

  async function create(agentId: string, tool: string, args: Record<string, unknown>): Promise<HttpResponse> {
    return http(`${base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await subject(agentId)}`,
        'x-client-assertion': await gateway.assertion(),
      },
      body: JSON.stringify({ metadata: {}, tool_name: tool, arguments: args }),
    });
  }

  async function sync(): Promise<HttpResponse> {
    return http(`${base}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
      headers: { 'x-client-assertion': await gateway.assertion() },
    });
  }

  it('expires a pending approval after approvals.pending_ttl: 410 gone on every later operation, and a new request may be made', async () => {
    const agent = await newAgent();
    const first = await create(agent, 'ttl_tool', { a: 1 });
    expect(first.status).toBe(201);
    const id = first.json<{ data: { id: string } }>().data.id;
    const approvedLater = (await create(agent, 'ttl_tool', { a: 2 })).json<{ data: { id: string } }>().data.id;
    const alice = new ApiClient(base, ALICE);
    expect((await alice.post(`/api/approvals/${approvedLater}/approve`, { persistence: 'permanent' })).status).toBe(
      200,
    );
    const before = await sync();

    clock.advance(TTL_MS - 1_000);
    expect((await alice.get(`/api/approvals/${id}`)).json<{ data: { status: string } }>().data.status).toBe('pending');
    clock.advance(1_000);

    const operations: [string, Promise<HttpResponse>][] = [
      ['get', alice.get(`/api/approvals/${id}`)],
      ['approve', alice.post(`/api/approvals/${id}/approve`, { persistence: 'once' })],
      ['deny', alice.post(`/api/approvals/${id}/deny`)],
      ['scope-preview', alice.post(`/api/approvals/${id}/scope-preview`, {})],
      ['revoke', alice.post(`/api/approvals/${id}/revoke`)],
      [
        'consume',
        http(`${base}/api/approvals/${id}/consume`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await subject(agent)}` },
        }),
      ],
    ];
    for (const [name, pending] of operations) {
      const response = await pending;
      expect(response.status, `${name} ${response.text}`).toBe(410);
      expect(response.json<{ error: string }>().error).toBe('gone');
    }
    expect(
      (await alice.get('/api/approvals/pending')).json<{ data: { id: string }[] }>().data.map((a) => a.id),
    ).not.toContain(id);

    // The sync sweeps first: the expired request is gone from the state, under a new version.
    const after = await sync();
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const listed = after
      .json<{ data: { pairs: { approvals: { id: string }[] }[] } }>()
      .data.pairs.flatMap((pair) => pair.approvals.map((a) => a.id));
    expect(listed).toEqual([approvedLater]);

    const again = await create(agent, 'ttl_tool', { a: 1 });
    expect(again.status).toBe(201);
    expect(again.json<{ data: { id: string } }>().data.id).not.toBe(id);
  });

  it('allows 10 creations per minute per user and agent, then 429 with Retry-After; a duplicate is still answered', async () => {
    const agent = await newAgent();
    const other = await newAgent();
    for (let i = 0; i < 10; i += 1) expect((await create(agent, 'burst_tool', { i })).status).toBe(201);
    clock.advance(15_000);
    const limited = await create(agent, 'burst_tool', { i: 10 });
    expect(limited.status, limited.text).toBe(429);
    expect(limited.json()).toEqual({
      error: 'rate_limited',
      message: 'at most 10 approvals may be requested per minute for one user and agent',
    });
    expect(limited.headers['retry-after']).toBe('45');
    expect((await create(agent, 'burst_tool', { i: 3 })).status).toBe(200);
    expect((await create(other, 'burst_tool', { i: 10 })).status).toBe(201);
    clock.advance(45_000);
    expect((await create(agent, 'burst_tool', { i: 10 })).status).toBe(201);
  });

  it('allows 50 pending approvals per user and agent, then 429 until the oldest expires or is decided', async () => {
    const agent = await newAgent();
    let firstId = '';
    for (let i = 0; i < 50; i += 1) {
      if (i > 0 && i % 10 === 0) clock.advance(61_000);
      const response = await create(agent, 'pending_tool', { i });
      expect(response.status, response.text).toBe(201);
      if (i === 0) firstId = response.json<{ data: { id: string } }>().data.id;
    }
    clock.advance(61_000);
    const limited = await create(agent, 'pending_tool', { i: 50 });
    expect(limited.status).toBe(429);
    expect(limited.json<{ message: string }>().message).toBe(
      'at most 50 approvals may be pending for one user and agent',
    );
    // The oldest pending was created 5 × 61 s ago and expires 10 minutes after its creation.
    expect(limited.headers['retry-after']).toBe(String((TTL_MS - 5 * 61_000) / 1000));
    expect((await new ApiClient(base, ALICE).post(`/api/approvals/${firstId}/deny`)).status).toBe(200);
    expect((await create(agent, 'pending_tool', { i: 50 })).status).toBe(201);
  });
});

describe('approvals.rate_limit configured', () => {
  let gateway: GatewayFixture;
  let broker: TestBroker;
  let base: string;
  const clock = new FrozenClock(new Date());

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      clock,
      subjectAudience: 'gateway',
      gatewaySub: 'gateway',
      ttlSeconds: 3600,
      config: { approvals: { rate_limit: { max_pending_per_pair: 3, max_requests_per_minute: 2 } } },
    });
    ({ broker, base } = gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  async function create(agentId: string, args: Record<string, unknown>): Promise<HttpResponse> {
    return http(`${base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await gateway.subjectToken(ALICE, agentId)}`,
        'x-client-assertion': await gateway.assertion(),
      },
      body: JSON.stringify({ metadata: {}, tool_name: 'tuned_tool', arguments: args }),
    });
  }

  it('applies max_requests_per_minute and max_pending_per_pair from the configuration', async () => {
    const agent = (await grantedAgent({ admin: broker.url('admin'), enduser: base }, [ALICE], 'Agent')).id;
    expect((await create(agent, { i: 0 })).status).toBe(201);
    expect((await create(agent, { i: 1 })).status).toBe(201);
    const perMinute = await create(agent, { i: 2 });
    expect(perMinute.status).toBe(429);
    expect(perMinute.json()).toEqual({
      error: 'rate_limited',
      message: 'at most 2 approvals may be requested per minute for one user and agent',
    });
    clock.advance(61_000);
    expect((await create(agent, { i: 2 })).status).toBe(201);
    const pending = await create(agent, { i: 3 });
    expect(pending.status).toBe(429);
    expect(pending.json()).toEqual({
      error: 'rate_limited',
      message: 'at most 3 approvals may be pending for one user and agent',
    });
  });
});
