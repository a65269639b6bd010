import { ApiClient, startGatewayFixture, testBackends, type GatewayFixture } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, grantMail, registerMailService, type MailService } from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ADMIN = 'incident-lead@example.com';
const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const CAROL = 'carol@example.com';
const NOT_DELEGATED = 'no active grant delegates this service to the agent';

interface AdminGrant {
  id: string;
  principal: string;
  agent_id: string;
  agent_display_name: string;
  services: { service_id: string; service_display_name: string; scopes: string[] }[];
  resources: { resource_id: string; resource_display_name: string; scopes: string[] }[];
  permission_sets: { permission_set_id: string; name: string }[];
  created_at: string;
  expires_at: string | null;
}

interface LedgerEvent {
  type: string;
  actor: { type: string; id: string | null };
  principal: string | null;
  agent_id: string | null;
}

// The exchange's context is cached on PostgreSQL until a change is announced: "refused at once" is checked on both.
describe.each(testBackends())('admin: people’s grants on $name', (backend) => {
  let gateway: GatewayFixture;
  let admin: ApiClient;
  let mail: MailService;
  /** A second agent holding the same permission set. */
  let writer: string;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      // The test provider listens on loopback, which issuer discovery refuses unless allowed.
      config: { third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } } },
    });
    admin = new ApiClient(gateway.broker.url('admin'), ADMIN);
    mail = await registerMailService(admin, gateway.base);
    writer = (
      await admin.post('/api/agents', { display_name: 'Writer', permission_sets: [{ permission_set_id: mail.set }] })
    ).json<{ id: string }>().id;
    // Each person connects Mail and grants it through the consent API, as the console does.
    for (const person of [ALICE, BOB, CAROL]) await connectThirdParty(gateway.base, person, mail.service);
    for (const person of [ALICE, BOB]) expect((await grantMail(gateway.base, person, mail)).status).toBe(201);
    const carol = await new ApiClient(gateway.base, CAROL).post(`/api/consent/agents/${writer}/grants`, {
      granted_permission_sets: { [mail.set]: [mail.service] },
    });
    expect(carol.status, carol.text).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await mail?.provider.stop();
  });

  const exchange = async (person: string, agent = mail.agent) =>
    (await gateway.exchange(person, agent, { resource: 'https://mail.example.com' })).response;
  const grantsOf = async (path: string): Promise<AdminGrant[]> => {
    const response = await admin.get(path);
    expect(response.status, response.text).toBe(200);
    return response.json<{ items: AdminGrant[] }>().items;
  };
  /** The person's `grant.revoked` events as administrators read them (the ledger's actor unmasked). */
  const revocationsOf = async (person: string): Promise<LedgerEvent[]> => {
    const response = await admin.get(`/api/events?principal=${encodeURIComponent(person)}&type=grant.revoked`);
    expect(response.status, response.text).toBe(200);
    return response.json<{ items: LedgerEvent[] }>().items;
  };

  it("lists the agent's active grants, newest first: who, which services and scopes, which permission sets, until when", async () => {
    const items = await grantsOf(`/api/agents/${mail.agent}/grants`);
    expect(items.map((grant) => grant.principal)).toEqual([BOB, ALICE]);
    const bob = items[0] as AdminGrant;
    expect(bob).toEqual({
      id: bob.id,
      principal: BOB,
      agent_id: mail.agent,
      agent_display_name: 'Agent',
      services: [{ service_id: mail.service, service_display_name: 'Mail', scopes: ['mail.read'] }],
      resources: [],
      permission_sets: [{ permission_set_id: mail.set, name: 'Mail' }],
      created_at: bob.created_at,
      expires_at: null,
    });
    expect(bob.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Date.parse(bob.created_at)).toBeLessThanOrEqual(Date.now());
    // The person's own API names the same grant.
    const own = await new ApiClient(gateway.base, BOB).get(`/api/consent/agents/${mail.agent}/grants`);
    expect(own.json<{ data: { id: string }[] }>().data.map((grant) => grant.id)).toEqual([bob.id]);
    expect(JSON.stringify(items)).not.toMatch(/token|secret/i);
  });

  it('lists grants across people by person, agent and service, combined with AND', async () => {
    expect((await grantsOf('/api/grants')).map((grant) => grant.principal)).toEqual([CAROL, BOB, ALICE]);
    expect((await grantsOf(`/api/grants?principal=${encodeURIComponent(CAROL)}`)).map((g) => g.agent_id)).toEqual([
      writer,
    ]);
    expect((await grantsOf(`/api/grants?agent_id=${mail.agent}`)).map((g) => g.principal)).toEqual([BOB, ALICE]);
    expect(await grantsOf(`/api/grants?service_id=${mail.service}`)).toHaveLength(3);
    expect(await grantsOf(`/api/grants?principal=${encodeURIComponent(CAROL)}&agent_id=${mail.agent}`)).toEqual([]);
    expect(await grantsOf(`/api/grants?service_id=${writer}`)).toEqual([]);
    const malformed = await admin.get('/api/grants?agent_id=not-a-uuid');
    expect(malformed.status).toBe(400);
    expect(malformed.json<{ error: string }>().error).toBe('invalid request');
    const unknown = await admin.get(`/api/agents/${mail.service}/grants`);
    expect(unknown.status).toBe(404);
    expect(unknown.json<{ error: string }>().error).toBe('agent not found');
  });

  it("revokes one person's grant: their exchange is refused at once, others' go on, the admin is the event's actor", async () => {
    expect((await exchange(ALICE)).status).toBe(200);
    expect((await exchange(BOB)).status).toBe(200);
    const alice = (await grantsOf(`/api/grants?principal=${encodeURIComponent(ALICE)}`))[0] as AdminGrant;
    // Another agent's grant id is not this agent's: nothing is revoked.
    const carol = (await grantsOf(`/api/grants?principal=${encodeURIComponent(CAROL)}`))[0] as AdminGrant;
    const misplaced = await admin.delete(`/api/agents/${mail.agent}/grants/${carol.id}`);
    expect(misplaced.status).toBe(404);
    expect(misplaced.json<{ error: string }>().error).toBe('grant not found');

    const revoked = await admin.delete(`/api/agents/${mail.agent}/grants/${alice.id}`);
    expect(revoked.status, revoked.text).toBe(204);
    const refused = await exchange(ALICE);
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'access_denied', error_description: NOT_DELEGATED });
    expect((await exchange(BOB)).status).toBe(200);
    expect((await grantsOf(`/api/agents/${mail.agent}/grants`)).map((grant) => grant.principal)).toEqual([BOB]);
    // The person sees it gone from their own grants.
    const own = await new ApiClient(gateway.base, ALICE).get(`/api/consent/agents/${mail.agent}/grants`);
    expect(own.json<{ data: unknown[] }>().data).toEqual([]);
    expect(await revocationsOf(ALICE)).toEqual([
      expect.objectContaining({ actor: { type: 'admin', id: ADMIN }, principal: ALICE, agent_id: mail.agent }),
    ]);

    const again = await admin.delete(`/api/agents/${mail.agent}/grants/${alice.id}`);
    expect(again.status).toBe(404);
    expect(again.json<{ error: string }>().error).toBe('grant not found');
  });

  it("revokes every active grant of the agent in an incident, and only that agent's", async () => {
    const all = await admin.delete(`/api/agents/${mail.agent}/grants`);
    expect(all.status, all.text).toBe(200);
    expect(all.json()).toEqual({ revoked: 1 });
    const refused = await exchange(BOB);
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'access_denied', error_description: NOT_DELEGATED });
    expect(await grantsOf(`/api/agents/${mail.agent}/grants`)).toEqual([]);
    expect(await revocationsOf(BOB)).toEqual([
      expect.objectContaining({ actor: { type: 'admin', id: ADMIN }, principal: BOB, agent_id: mail.agent }),
    ]);
    // The other agent's grant stands, and works.
    expect((await grantsOf('/api/grants')).map((grant) => [grant.principal, grant.agent_id])).toEqual([
      [CAROL, writer],
    ]);
    expect((await exchange(CAROL, writer)).status).toBe(200);
    // Nothing left: zero, not an error.
    expect((await admin.delete(`/api/agents/${mail.agent}/grants`)).json()).toEqual({ revoked: 0 });
    // The person can grant again afterwards.
    expect((await grantMail(gateway.base, BOB, mail)).status).toBe(201);
    expect((await exchange(BOB)).status).toBe(200);
  });
});
