import { randomUUID } from 'node:crypto';
import { type AnyBrokerEvent, type EventToAppend } from '@broker/events';
import { EventRepository } from '@broker/persistence';
import { ApiClient, FrozenClock, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

/**
 * `GET /api/activity/names`: the names the person's activity refers to. Every agent of the person's own history,
 * by name, also one whose access the person revoked (marked not allowed); never an agent only another person's
 * history has; the registered MCP servers with their scopes in words.
 */

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

interface Names {
  agents: { agent_id: string; display_name: string; allowed: boolean }[];
  resources: {
    id: string;
    resource_uri: string;
    display_name: string;
    scopes: { scope: string; description: string }[];
  }[];
}

describe.each(testBackends())('GET /api/activity/names on $name', (backend) => {
  const clock = new FrozenClock('2026-06-01T12:00:00.000Z');
  let broker: TestBroker;
  let ledger: EventRepository;
  let admin: ApiClient;
  let alice: ApiClient;
  let set: string;
  let service: string;
  let resource: string;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock, config: { storage: await backend.storage() } });
    ledger = broker.broker.server('enduser').app.get(EventRepository);
    admin = new ApiClient(broker.url('admin'), 'root-admin@example.com');
    alice = new ApiClient(broker.url('enduser'), ALICE);
    const created = await admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'mail-client',
      client_secret: 'not-used-here',
      issuer_uri: 'https://mail.example.com',
      authorization_endpoint: 'https://mail.example.com/authorize',
      token_endpoint: 'https://mail.example.com/token',
      scopes: [{ scope: 'read', description: 'Read your mail' }],
      protected_resources: ['https://mail.example.com/api'],
    });
    expect(created.status, created.text).toBe(201);
    service = created.json<{ id: string }>().id;
    const hr = await admin.post('/api/resources', {
      display_name: 'HR records',
      resource_uri: 'https://hr.example.com/mcp',
      scopes: [{ scope: 'hr:read', description: 'See your HR records' }],
    });
    expect(hr.status, hr.text).toBe(201);
    resource = hr.json<{ id: string }>().id;
    set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
  });

  afterAll(async () => {
    await broker?.stop();
  });

  async function agent(name: string): Promise<string> {
    const created = await admin.post('/api/agents', {
      display_name: name,
      permission_sets: [{ permission_set_id: set }],
    });
    expect(created.status, created.text).toBe(201);
    return created.json<{ id: string }>().id;
  }

  async function grant(client: ApiClient, agentId: string): Promise<void> {
    const answer = await client.post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [set]: [service] },
    });
    expect(answer.status, answer.text).toBe(201);
  }

  function event(principal: string, agentId: string, type: 'token.exchanged' | 'approval.requested'): EventToAppend {
    const e: AnyBrokerEvent =
      type === 'token.exchanged'
        ? {
            type,
            actor: { type: 'gateway', id: 'gateway-1' },
            principal,
            agentId,
            serviceId: service,
            outcome: 'success',
            traceId: null,
            details: { resource: 'https://mail.example.com/api', oauth_error: null },
          }
        : {
            type,
            actor: { type: 'gateway', id: 'gateway-1' },
            principal,
            agentId,
            serviceId: null,
            outcome: 'success',
            traceId: null,
            details: {
              approval_id: randomUUID(),
              tool_name: 'send_email',
              risk_level: 'low',
              argument_names: [],
              arguments_sha256: '0'.repeat(64),
            },
          };
    return { id: randomUUID(), occurredAt: new Date('2026-05-30T10:00:00.000Z'), event: e };
  }

  it("names every agent of the caller's history, a revoked one marked not allowed, never one only another person's history has", async () => {
    const allowed = await agent('Calendar Agent');
    const revoked = await agent('Mail Agent');
    const onlyApprovals = await agent('Approvals Agent');
    const bobs = await agent('Bob Agent');
    const deleted = await agent('Deleted Agent');
    await grant(alice, allowed);
    await grant(alice, revoked);
    const revoke = await alice.delete(`/api/consent/agents/${revoked}/grants`);
    expect(revoke.status, revoke.text).toBeLessThan(300);
    await grant(new ApiClient(broker.url('enduser'), BOB), bobs);
    await ledger.append([
      event(ALICE, revoked, 'token.exchanged'),
      event(ALICE, allowed, 'token.exchanged'),
      event(ALICE, onlyApprovals, 'approval.requested'),
      event(ALICE, deleted, 'token.exchanged'),
      event(BOB, bobs, 'token.exchanged'),
      event(BOB, bobs, 'approval.requested'),
    ]);
    expect((await admin.delete(`/api/agents/${deleted}`)).status).toBe(204);

    const response = await alice.get('/api/activity/names');
    expect(response.status, response.text).toBe(200);
    const names = response.json<{ data: Names }>().data;
    // The grant events the console wrote name the agents too: every agent here is the caller's own.
    expect(names.agents).toEqual([
      { agent_id: onlyApprovals, display_name: 'Approvals Agent', allowed: false },
      { agent_id: allowed, display_name: 'Calendar Agent', allowed: true },
      { agent_id: revoked, display_name: 'Mail Agent', allowed: false },
    ]);
    const bob = (await new ApiClient(broker.url('enduser'), BOB).get('/api/activity/names')).json<{ data: Names }>()
      .data;
    expect(bob.agents).toEqual([{ agent_id: bobs, display_name: 'Bob Agent', allowed: true }]);
    expect(names.resources).toEqual([
      {
        id: resource,
        resource_uri: 'https://hr.example.com/mcp',
        display_name: 'HR records',
        scopes: [{ scope: 'hr:read', description: 'See your HR records' }],
      },
    ]);
  });

  it('answers empty lists of agents to a person without activity', async () => {
    const response = await new ApiClient(broker.url('enduser'), 'nobody@example.com').get('/api/activity/names');
    expect(response.status, response.text).toBe(200);
    expect(response.json<{ data: Names }>().data.agents).toEqual([]);
  });
});
