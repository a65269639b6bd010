import {
  ApiClient,
  eventually,
  FrozenClock,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
} from '@broker/testing';
import { LongPollHub } from '@broker/approvals';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent, type GrantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';

interface Approval {
  id: string;
  status: string;
  revoked_at: string | null;
}

interface SyncBody {
  data: { pairs: { principal: string; agent_id: string; approvals: { id: string }[] }[] };
}

/**
 * Tool approvals live only as long as the person's grant for the agent (docs/approvals.md
 * "Grants and approvals"): an agent without an active grant may not ask (403
 * `grant_required`), and deleting the grant ends every live approval of the pair, on both
 * backends.
 */
describe.each(testBackends())('tool approvals and the grant on $name', (backend) => {
  let gateway: GatewayFixture;
  let base: string;
  let alice: ApiClient;
  const clock = new FrozenClock(new Date());

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      clock,
      subjectAudience: 'gateway',
      gatewaySub: 'gateway',
      ttlSeconds: 3600,
    });
    base = gateway.base;
    alice = new ApiClient(base, ALICE);
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const newAgent = (principals: readonly string[] = [ALICE]): Promise<GrantedAgent> =>
    grantedAgent({ admin: gateway.broker.url('admin'), enduser: base }, principals);

  async function create(
    agentId: string,
    tool: string,
    options: { metadata?: Record<string, unknown>; headers?: Record<string, string | undefined> } = {},
  ): Promise<HttpResponse> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      authorization: `Bearer ${await gateway.subjectToken(ALICE, agentId)}`,
      'x-client-assertion': await gateway.assertion(),
    };
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    return http(`${base}/api/approvals`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        metadata: options.metadata ?? {},
        tool_name: tool,
        arguments: { path: '/srv/app' },
        risk_level: 'critical',
      }),
    });
  }

  async function pending(agentId: string, tool: string, metadata: Record<string, unknown> = {}): Promise<string> {
    const response = await create(agentId, tool, { metadata });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  const consume = async (agentId: string, id: string): Promise<HttpResponse> =>
    http(`${base}/api/approvals/${id}/consume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await gateway.subjectToken(ALICE, agentId)}` },
    });

  const expectGrantRequired = (response: HttpResponse, agentId: string): void => {
    expect(response.status, response.text).toBe(403);
    expect(response.json()).toEqual({
      error: 'grant_required',
      message: `agent ${agentId} has no active grant from this person: ask them to allow it in the console first`,
    });
  };

  const pendingIds = async (): Promise<string[]> =>
    (await alice.get('/api/approvals/pending')).json<{ data: { id: string }[] }>().data.map((a) => a.id);
  const approval = async (id: string): Promise<Approval> =>
    (await alice.get(`/api/approvals/${id}`)).json<{ data: Approval }>().data;
  const sync = async (headers: Record<string, string> = {}): Promise<HttpResponse> =>
    http(`${base}/api/approvals?principal=${encodeURIComponent(ALICE)}&agent_session_id=s-1`, {
      headers: { 'x-client-assertion': await gateway.assertion(), ...headers },
    });
  const syncedIds = (response: HttpResponse, agentId: string): string[] =>
    response
      .json<SyncBody>()
      .data.pairs.filter((pair) => pair.agent_id === agentId)
      .flatMap((pair) => pair.approvals.map((a) => a.id));

  it('refuses a create for an agent the person never allowed (403 grant_required), after the credential checks, and lists nothing new', async () => {
    const agent = await newAgent([]);
    const before = await pendingIds();
    expectGrantRequired(await create(agent.id, 'deploy'), agent.id);
    // Credentials first: a missing or invalid one is 401 whatever the grant.
    expect((await create(agent.id, 'deploy', { headers: { 'x-client-assertion': undefined } })).status).toBe(401);
    expect((await create(agent.id, 'deploy', { headers: { authorization: 'Bearer not.a.jwt' } })).status).toBe(401);
    expect(await pendingIds()).toEqual(before);
    await agent.allow(ALICE);
    expect((await create(agent.id, 'deploy')).status).toBe(201);
  });

  it('refuses a create once the grant has expired, and the consume of a one-time approval made before; allowing again brings back none of them', async () => {
    const agent = await newAgent([]);
    const validUntil = new Date(clock.now().getTime() + 60_000).toISOString();
    const detail = (await alice.get(`/api/consent/agents/${agent.id}`)).json<{
      data: { permission_sets: { id: string; services: { service_id: string }[] }[] };
    }>().data;
    const set = detail.permission_sets[0];
    expect(set, 'the agent has a permission set').toBeDefined();
    const granted = await alice.post(`/api/consent/agents/${agent.id}/grants`, {
      granted_permission_sets: { [set?.id ?? '']: set?.services.map((s) => s.service_id) },
      valid_until: validUntil,
    });
    expect(granted.status, granted.text).toBe(201);
    const once = await pending(agent.id, 'restart');
    expect((await alice.post(`/api/approvals/${once}/approve`, { persistence: 'once' })).status).toBe(200);
    const always = await pending(agent.id, 'list_files');
    expect((await alice.post(`/api/approvals/${always}/approve`, { persistence: 'permanent' })).status).toBe(200);

    clock.advance(60_000);

    expectGrantRequired(await create(agent.id, 'restart_again'), agent.id);
    expectGrantRequired(await consume(agent.id, once), agent.id);
    expect(await approval(once)).toMatchObject({ status: 'approved' });

    // Allowed again: the new grant starts with no remembered decision of the expired one.
    const regranted = await alice.post(`/api/consent/agents/${agent.id}/grants`, {
      granted_permission_sets: { [set?.id ?? '']: set?.services.map((s) => s.service_id) },
    });
    expect(regranted.status, regranted.text).toBe(201);
    for (const id of [once, always]) expect(await approval(id)).toMatchObject({ status: 'revoked' });
    expect(syncedIds(await sync(), agent.id)).toEqual([]);
    const remembered = (await alice.get('/api/approvals/permanent')).json<{ data: { id: string }[] }>().data;
    expect(remembered.map((a) => a.id)).not.toContain(always);
    // Replacing an active grant (a change of sets or expiry) keeps what the person decided under it.
    const kept = await pending(agent.id, 'list_files');
    expect((await alice.post(`/api/approvals/${kept}/approve`, { persistence: 'permanent' })).status).toBe(200);
    const replaced = await alice.post(`/api/consent/agents/${agent.id}/grants`, {
      granted_permission_sets: { [set?.id ?? '']: set?.services.map((s) => s.service_id) },
      valid_until: new Date(clock.now().getTime() + 3_600_000).toISOString(),
    });
    expect(replaced.status, replaced.text).toBe(201);
    expect(await approval(kept)).toMatchObject({ status: 'approved' });
    expect(syncedIds(await sync(), agent.id)).toEqual([kept]);
  });

  it('ends pending requests, one-time, session and permanent approvals and permanent denials with the revoked grant; re-granting brings none back', async () => {
    const agent = await newAgent();
    const other = await newAgent();
    const waiting = await pending(agent.id, 'delete_folder');
    const once = await pending(agent.id, 'share_file');
    const session = await pending(agent.id, 'read_file', { agent_session_id: 's-1' });
    const always = await pending(agent.id, 'list_files');
    const never = await pending(agent.id, 'wipe_disk');
    const kept = await pending(other.id, 'delete_folder');
    expect((await alice.post(`/api/approvals/${once}/approve`, { persistence: 'once' })).status).toBe(200);
    expect((await alice.post(`/api/approvals/${session}/approve`, { persistence: 'session' })).status).toBe(200);
    expect((await alice.post(`/api/approvals/${always}/approve`, { persistence: 'permanent' })).status).toBe(200);
    expect((await alice.post(`/api/approvals/${never}/deny`, { persistence: 'permanent' })).status).toBe(200);
    expect(syncedIds(await sync(), agent.id).sort()).toEqual([waiting, once, session, always, never].sort());

    await agent.revoke(ALICE);

    for (const id of [waiting, once, session, always, never]) {
      const ended = await approval(id);
      expect(ended.status).toBe('revoked');
      expect(Date.parse(ended.revoked_at ?? '')).toBe(clock.now().getTime());
    }
    expect(await pendingIds()).not.toContain(waiting);
    expect(await pendingIds()).toContain(kept);
    const remembered = (await alice.get('/api/approvals/permanent')).json<{ data: { id: string }[] }>().data;
    expect(remembered.map((a) => a.id)).not.toEqual(expect.arrayContaining([always]));
    expect(remembered.map((a) => a.id)).not.toEqual(expect.arrayContaining([never]));
    expect(syncedIds(await sync(), agent.id)).toEqual([]);
    expect(syncedIds(await sync(), other.id)).toEqual([kept]);
    // The one-time approval was ended: consuming it is refused like any revoked approval.
    const consumed = await consume(agent.id, once);
    expect(consumed.status).toBe(422);
    expect(consumed.json<{ error: string }>().error).toBe('not_consumable');
    // A duplicate of the ended pending request is refused, never answered with the old record.
    expectGrantRequired(await create(agent.id, 'delete_folder'), agent.id);

    await agent.allow(ALICE);
    expect(syncedIds(await sync(), agent.id)).toEqual([]);
    expect((await approval(always)).status).toBe('revoked');
    const asked = await create(agent.id, 'delete_folder');
    expect(asked.status, asked.text).toBe(201);
    expect(asked.json<{ data: { id: string } }>().data.id).not.toBe(waiting);
  });

  it('ends them too when the grant is deleted by an empty grant POST', async () => {
    const agent = await newAgent();
    const always = await pending(agent.id, 'list_files');
    expect((await alice.post(`/api/approvals/${always}/approve`, { persistence: 'permanent' })).status).toBe(200);
    const emptied = await alice.post(`/api/consent/agents/${agent.id}/grants`, { granted_permission_sets: {} });
    expect(emptied.status).toBe(204);
    expect(await approval(always)).toMatchObject({ status: 'revoked' });
    expectGrantRequired(await create(agent.id, 'list_files'), agent.id);
  });

  it('wakes a held sync at once when the revocation ends the approvals, and the pair leaves the state', async () => {
    const agent = await newAgent();
    const always = await pending(agent.id, 'list_files');
    expect((await alice.post(`/api/approvals/${always}/approve`, { persistence: 'permanent' })).status).toBe(200);
    const current = await sync();
    expect(syncedIds(current, agent.id)).toEqual([always]);
    const hub = gateway.broker.broker.server('enduser').app.get(LongPollHub);
    const waiting = sync({ 'if-none-match': current.headers.etag as string, 'x-long-poll-timeout': '60' });
    expect(await eventually(() => hub.held === 1)).toBe(true);

    await agent.revoke(ALICE);

    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(woken.headers.etag).not.toBe(current.headers.etag);
    expect(syncedIds(woken, agent.id)).toEqual([]);
  });
});
