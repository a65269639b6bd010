import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, FrozenClock, modeConfig, OtlpReceiver, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API } from '../../apps/admin-api/src/admin-api.server';
import { grantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';

interface Overview {
  mode: string;
  status: string;
  counts: Record<string, number>;
  signing_keys: { kid: string; algorithm: string; is_current: boolean; created_at: string; age_days: number }[];
  warnings: { code: string; message: string }[];
  recent_admin_actions: { type: string; actor: { type: string; id: string | null }; agent_id: string | null }[];
}

const DAY_MS = 86_400_000;

describe('admin: GET /api/overview', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  const clock = new FrozenClock('2026-03-01T08:00:00.000Z');

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock });
    admin = new ApiClient(broker.url('admin'), 'alice-admin@example.com');
  });

  afterAll(async () => {
    await broker.stop();
  });

  const overview = async (): Promise<Overview> => {
    const response = await admin.get('/api/overview');
    expect(response.status).toBe(200);
    return response.json<Overview>();
  };

  it('on a fresh install: local mode, healthy, nothing registered, the first signing key, tracing off', async () => {
    const body = await overview();
    expect(Object.keys(body).sort()).toEqual([
      'counts',
      'mode',
      'recent_admin_actions',
      'signing_keys',
      'status',
      'warnings',
    ]);
    expect(body).toMatchObject({ mode: 'local', status: 'healthy' });
    expect(body.counts).toEqual({
      agents: 0,
      suspended_agents: 0,
      services: 0,
      resources: 0,
      permission_sets: 0,
      active_grants: 0,
      pending_approvals: 0,
    });
    expect(body.signing_keys).toHaveLength(1);
    expect(body.signing_keys[0]).toMatchObject({ algorithm: 'ES256', is_current: true, age_days: 0 });
    // The test config names its own keys and no allow-list: only tracing is left off.
    expect(body.warnings.map((warning) => warning.code)).toEqual(['tracing_off']);
    expect(body.warnings[0]?.message).toContain('telemetry.tracing.enabled');
    expect(body.recent_admin_actions).toEqual([]);
  });

  it('counts what is created, and lists the agent creation as the admin’s newest action', async () => {
    const created = await admin.post('/api/agents', { display_name: 'Expense assistant' });
    expect(created.status).toBe(201);
    const agentId = created.json<{ id: string }>().id;
    let body = await overview();
    expect(body.counts.agents).toBe(1);
    expect(body.recent_admin_actions[0]).toMatchObject({
      type: 'agent.created',
      actor: { type: 'admin', id: 'alice-admin@example.com' },
      agent_id: agentId,
    });

    // A service, a permission set, a second agent, and a person's grant to it (end-user API).
    const mail = await grantedAgent({ admin: broker.url('admin'), enduser: broker.url('enduser') }, [
      'bob@example.com',
      'carol@example.com',
    ]);
    const resource = await admin.post('/api/resources', {
      display_name: 'Calendar MCP server',
      resource_uri: 'https://calendar-mcp.example.com/mcp',
      scopes: [{ scope: 'calendar.read', description: 'Read your calendar' }],
    });
    expect(resource.status).toBe(201);
    body = await overview();
    expect(body.counts).toEqual({
      agents: 2,
      suspended_agents: 0,
      services: 1,
      resources: 1,
      permission_sets: 1,
      active_grants: 2,
      pending_approvals: 0,
    });
    // Newest first, every one the admin's; the people's grants are not admin actions.
    expect(body.recent_admin_actions.map((event) => event.type)).toEqual([
      'resource.created',
      'agent.created',
      'permission_set.created',
      'service.created',
      'agent.created',
    ]);
    expect(new Set(body.recent_admin_actions.map((event) => event.actor.type))).toEqual(new Set(['admin']));

    await mail.revoke('bob@example.com');
    expect((await overview()).counts.active_grants).toBe(1);
  });

  it('keeps ten actions, newest first', async () => {
    for (let i = 0; i < 11; i += 1) {
      expect((await admin.post('/api/agents', { display_name: `Agent ${i}` })).status).toBe(201);
    }
    const actions = (await overview()).recent_admin_actions;
    expect(actions).toHaveLength(10);
    expect(actions.every((event) => event.type === 'agent.created')).toBe(true);
    expect((await overview()).counts.agents).toBe(13);
  });

  it('warns when the current signing key is older than rotate_after (90 days), and stops once another is current', async () => {
    clock.advance(89 * DAY_MS);
    let body = await overview();
    expect(body.signing_keys[0]?.age_days).toBe(89);
    expect(body.warnings.map((warning) => warning.code)).not.toContain('signing_key_due');
    clock.advance(2 * DAY_MS);
    body = await overview();
    const old = body.signing_keys[0]?.kid as string;
    const due = body.warnings.find((warning) => warning.code === 'signing_key_due');
    expect(due?.message).toContain(`${old} is 91 days old`);
    expect(due?.message).toContain('oauth2_authorization_server.local.signing_keys.rotate_after (90 days)');

    const added = await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'ES256' });
    expect(added.status).toBe(201);
    const kid = added.json<{ kid: string }>().kid;
    expect((await admin.put(`/api/oauth2-server/signing-keys/${kid}/current`)).status).toBe(200);
    body = await overview();
    expect(body.warnings.map((warning) => warning.code)).toEqual(['tracing_off']);
    expect(body.signing_keys.map((key) => [key.kid, key.is_current, key.age_days])).toEqual([
      [kid, true, 0],
      [old, false, 91],
    ]);
    // A retired key leaves the overview's list.
    expect((await admin.delete(`/api/oauth2-server/signing-keys/${old}`)).status).toBe(204);
    expect((await overview()).signing_keys.map((key) => key.kid)).toEqual([kid]);
  });
});

describe('admin: GET /api/overview warns about the configuration', () => {
  let broker: TestBroker;
  let receiver: OtlpReceiver;
  let keysFile: string;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    keysFile = join(mkdtempSync(join(tmpdir(), 'overview-dev-keys-')), 'development-keys.json');
    broker = await startTestBroker({
      servers: [ADMIN_API],
      config: {
        ...modeConfig('proxy'),
        // No keys configured: the development keys file stands in for both.
        encryption: { keys: [], current_key_id: undefined },
        third_party_oauth2: { jwe_keys: [], discovery: { allowed_networks: ['10.0.0.0/8', '127.0.0.0/8'] } },
        development: { keys_file: keysFile },
        events: { webhooks: { allowed_networks: ['::1/128'] } },
        telemetry: { tracing: { enabled: true, endpoint: receiver.endpoint } },
      },
    });
  });

  afterAll(async () => {
    await broker?.stop();
    await receiver?.stop();
  });

  it('development keys in use and an allow-list wider than loopback; tracing on; no signing keys in proxy mode', async () => {
    const response = await new ApiClient(broker.url('admin')).get('/api/overview');
    expect(response.status).toBe(200);
    const body = response.json<Overview>();
    expect(body.mode).toBe('proxy');
    expect(body.signing_keys).toEqual([]);
    expect(body.warnings.map((warning) => warning.code)).toEqual(['development_keys', 'discovery_allow_list_wide']);
    const [development, wide] = body.warnings;
    expect(development?.message).toContain('encryption.keys and third_party_oauth2.jwe_keys are not configured');
    expect(development?.message).toContain(keysFile);
    // Loopback entries (127.0.0.0/8, ::1/128) are named nowhere: only what reaches beyond loopback.
    expect(wide?.message).toContain('third_party_oauth2.discovery.allowed_networks allows 10.0.0.0/8.');
    expect(wide?.message).not.toContain('127.0.0.0/8');
    expect(wide?.message).not.toContain('events.webhooks');
  });
});
