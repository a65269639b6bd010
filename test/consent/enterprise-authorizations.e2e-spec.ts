import { randomUUID } from 'node:crypto';
import { TokenStateRepository } from '@broker/persistence';
import { ApiClient, FrozenClock, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowByOrganisation } from '../support/enterprise-authorizations';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const ROOT = 'root@example.com';
const IDP = 'https://acme.idp.example';
const MAIL_MCP = 'https://mail.example.com/mcp';
const FILES_MCP = 'https://files.example.com/mcp';
const UNKNOWN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

interface AuthorizationView {
  id: string;
  principal?: string;
  agent_id: string;
  agent_display_name: string;
  agent_logo_url: string | null;
  issuer: string;
  resource_uri: string;
  resource_display_name: string | null;
  scopes: string[];
  first_issued_at: string;
  last_issued_at: string;
  expires_at: string;
}

interface LedgerEvent {
  type: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  outcome: string;
  details: Record<string, unknown>;
}

/**
 * What a person's organisation allowed an agent through an enterprise IdP (docs/oauth2.md
 * "Enterprise-managed authorization"), as the person (`/api/consent/enterprise-authorizations`)
 * and the administrator (`/api/agents/{agentId}/enterprise-authorizations`) see and revoke it.
 * The rows are written as the token endpoint writes them (`allowByOrganisation`).
 */
describe.each(testBackends())('enterprise authorizations: the person and the admin on $name', (backend) => {
  const clock = new FrozenClock('2026-06-01T12:00:00.000Z');
  let broker: TestBroker;
  let admin: ApiClient;
  let alice: ApiClient;
  let bob: ApiClient;
  let mailAgent: string;
  let filesAgent: string;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock, config: { storage: await backend.storage() } });
    admin = new ApiClient(broker.url('admin'), ROOT);
    alice = new ApiClient(broker.url('enduser'), ALICE);
    bob = new ApiClient(broker.url('enduser'), BOB);
    const agent = async (body: Record<string, unknown>): Promise<string> => {
      const response = await admin.post('/api/agents', body);
      expect(response.status, response.text).toBe(201);
      return response.json<{ id: string }>().id;
    };
    mailAgent = await agent({ display_name: 'Mail Agent', logo_url: 'https://cdn.example.com/mail.png' });
    filesAgent = await agent({ display_name: 'Files Agent' });
    const resource = await admin.post('/api/resources', {
      display_name: 'Mail MCP',
      resource_uri: MAIL_MCP,
      scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
    });
    expect(resource.status, resource.text).toBe(201);
  });

  afterAll(async () => {
    await broker?.stop();
  });

  /** A token issued on an ID-JAG `minutesAgo`, as the grant records it; the authorization's id (the tokens' `sid`). */
  function allow(principal: string, agentId: string, resourceUri: string, minutesAgo = 0): Promise<string> {
    return allowByOrganisation(broker, {
      principal,
      agentId,
      issuer: IDP,
      resourceUri,
      scopes: resourceUri === MAIL_MCP ? ['mail.read'] : ['files.read', 'files.write'],
      issuedAt: new Date(clock.now().getTime() - minutesAgo * 60_000),
    });
  }

  const mine = async (client: ApiClient): Promise<AuthorizationView[]> => {
    const response = await client.get('/api/consent/enterprise-authorizations');
    expect(response.status, response.text).toBe(200);
    return response.json<{ data: AuthorizationView[] }>().data;
  };
  const agentsList = async (agentId: string, query = ''): Promise<AuthorizationView[]> => {
    const response = await admin.get(`/api/agents/${agentId}/enterprise-authorizations${query}`);
    expect(response.status, response.text).toBe(200);
    return response.json<{ items: AuthorizationView[] }>().items;
  };
  const activity = async (client: ApiClient): Promise<LedgerEvent[]> =>
    (await client.get('/api/activity?type=enterprise_access.revoked')).json<{ data: LedgerEvent[] }>().data;
  const ledger = async (): Promise<LedgerEvent[]> =>
    (await admin.get('/api/events?type=enterprise_access.revoked')).json<{ items: LedgerEvent[] }>().items;

  describe('the person', () => {
    it("lists the caller's live enterprise authorizations, newest first, each with its agent, resource and scopes in words", async () => {
      expect(await mine(bob)).toEqual([]);
      const older = await allow(ALICE, mailAgent, MAIL_MCP, 30);
      const newer = await allow(ALICE, filesAgent, FILES_MCP, 10);
      await allow(BOB, mailAgent, MAIL_MCP, 5);
      const list = await mine(alice);
      expect(list.map((view) => view.id)).toEqual([newer, older]);
      expect(list[1]).toEqual({
        id: older,
        agent_id: mailAgent,
        agent_display_name: 'Mail Agent',
        agent_logo_url: 'https://cdn.example.com/mail.png',
        issuer: IDP,
        resource_uri: MAIL_MCP,
        resource_display_name: 'Mail MCP',
        scopes: ['mail.read'],
        // Each scope in words, as the registered MCP server describes it.
        permissions: [{ scope: 'mail.read', description: 'Read your mail' }],
        first_issued_at: '2026-06-01T11:30:00.000Z',
        last_issued_at: '2026-06-01T11:30:00.000Z',
        expires_at: '2026-06-01T12:30:00.000Z',
      });
      // The files MCP server is not registered: no name to show.
      expect(list[0]).toMatchObject({
        agent_logo_url: null,
        resource_display_name: null,
        permissions: [
          { scope: 'files.read', description: null },
          { scope: 'files.write', description: null },
        ],
      });
      expect((await mine(bob)).map((view) => view.agent_id)).toEqual([mailAgent]);
      expect((await alice.as(null).get('/api/consent/enterprise-authorizations')).status).toBe(401);
    });

    it("revokes one (204): gone from the list, its tokens' sid revoked at once, recorded in the ledger and the audit log", async () => {
      const id = await allow('carol@example.com', mailAgent, MAIL_MCP);
      const carol = alice.as('carol@example.com');
      const tokenState = broker.broker.server('enduser').app.get(TokenStateRepository);
      const key = { jti: randomUUID(), familyId: id, principal: 'carol@example.com', agentId: mailAgent };
      // Read once first: on PostgreSQL introspection keeps it in memory from now on.
      expect(await tokenState.accessTokenFacts(key, clock.now())).toMatchObject({ familyRevoked: false });

      const response = await carol.delete(`/api/consent/enterprise-authorizations/${id}`);
      expect(response.status, response.text).toBe(204);
      expect(response.text).toBe('');
      expect(await mine(carol)).toEqual([]);
      expect(await tokenState.accessTokenFacts(key, clock.now())).toMatchObject({ familyRevoked: true });

      const event = {
        type: 'enterprise_access.revoked',
        actor: { type: 'principal', id: 'carol@example.com' },
        agent_id: mailAgent,
        outcome: 'success',
        details: { authorization_id: id, issuer: IDP, resource: MAIL_MCP },
      };
      expect(await activity(carol)).toEqual([expect.objectContaining(event)]);
      expect(await ledger()).toContainEqual(expect.objectContaining({ ...event, principal: 'carol@example.com' }));
      const audit = broker.logs.records().filter((r) => r.audit === true && r.event === 'enterprise_access_revoked');
      expect(audit).toEqual([
        expect.objectContaining({
          principal: 'carol@example.com',
          agent_id: mailAgent,
          issuer: IDP,
          resource: MAIL_MCP,
          actor_type: 'principal',
          outcome: 'revoked',
        }),
      ]);

      // Already revoked: 404, and nothing recorded again.
      const again = await carol.delete(`/api/consent/enterprise-authorizations/${id}`);
      expect(again.status).toBe(404);
      expect(again.json()).toEqual({ error: 'not_found', message: `no enterprise authorization ${id}` });
      expect(await activity(carol)).toHaveLength(1);
    });

    it("answers 404 for another person's authorization or an unknown id, 400 for a malformed one", async () => {
      const id = await allow('dave@example.com', mailAgent, MAIL_MCP);
      const foreign = await bob.delete(`/api/consent/enterprise-authorizations/${id}`);
      expect(foreign.status).toBe(404);
      expect(foreign.json()).toEqual({ error: 'not_found', message: `no enterprise authorization ${id}` });
      expect((await mine(bob.as('dave@example.com'))).map((view) => view.id)).toEqual([id]);
      expect((await bob.delete(`/api/consent/enterprise-authorizations/${UNKNOWN}`)).status).toBe(404);
      const malformed = await bob.delete('/api/consent/enterprise-authorizations/nope');
      expect(malformed.status).toBe(400);
      expect(malformed.json<{ error: string }>().error).toBe('bad request');
    });

    it('no longer lists an authorization whose last token expired', async () => {
      await allow('erin@example.com', filesAgent, FILES_MCP, 61);
      expect(await mine(alice.as('erin@example.com'))).toEqual([]);
    });
  });

  describe('the admin', () => {
    it("lists an agent's live enterprise authorizations with their person, filtered by principal on request", async () => {
      const frank = await allow('frank@example.com', filesAgent, FILES_MCP, 3);
      const grace = await allow('grace@example.com', filesAgent, MAIL_MCP, 2);
      const all = await agentsList(filesAgent);
      expect(all.slice(0, 2).map((view) => [view.id, view.principal])).toEqual([
        [grace, 'grace@example.com'],
        [frank, 'frank@example.com'],
      ]);
      expect(all.every((view) => view.agent_id === filesAgent)).toBe(true);
      expect(all[0]).toMatchObject({ agent_display_name: 'Files Agent', resource_display_name: 'Mail MCP' });
      const filtered = await agentsList(filesAgent, `?principal=${encodeURIComponent('frank@example.com')}`);
      expect(filtered.map((view) => view.id)).toEqual([frank]);
      expect(await agentsList(filesAgent, '?principal=nobody%40example.com')).toEqual([]);
    });

    it('answers 404 for an unknown agent and 400 for a malformed id', async () => {
      const unknown = await admin.get(`/api/agents/${UNKNOWN}/enterprise-authorizations`);
      expect(unknown.status).toBe(404);
      expect(unknown.json()).toEqual({ error: 'agent not found', message: `no agent ${UNKNOWN}` });
      expect((await admin.delete(`/api/agents/${UNKNOWN}/enterprise-authorizations/${UNKNOWN}`)).status).toBe(404);
      expect((await admin.get('/api/agents/nope/enterprise-authorizations')).status).toBe(400);
      expect((await admin.delete(`/api/agents/${filesAgent}/enterprise-authorizations/nope`)).status).toBe(400);
    });

    it("revokes one (204), recorded with the admin as actor and in the person's activity; 404 once revoked or for another agent", async () => {
      const id = await allow('heidi@example.com', mailAgent, MAIL_MCP);
      const heidi = alice.as('heidi@example.com');
      const other = await admin.delete(`/api/agents/${filesAgent}/enterprise-authorizations/${id}`);
      expect(other.status).toBe(404);
      expect(other.json()).toEqual({ error: 'not_found', message: `no enterprise authorization ${id}` });

      const response = await admin.delete(`/api/agents/${mailAgent}/enterprise-authorizations/${id}`);
      expect(response.status, response.text).toBe(204);
      expect(await mine(heidi)).toEqual([]);
      expect((await agentsList(mailAgent)).map((view) => view.id)).not.toContain(id);
      const event = {
        type: 'enterprise_access.revoked',
        actor: { type: 'admin', id: ROOT },
        agent_id: mailAgent,
        details: { authorization_id: id, issuer: IDP, resource: MAIL_MCP },
      };
      // The person reads that an administrator did it, never which one; the admins' ledger names them.
      expect(await activity(heidi)).toEqual([
        expect.objectContaining({ ...event, actor: { type: 'admin', id: null } }),
      ]);
      expect(await ledger()).toContainEqual(expect.objectContaining({ ...event, principal: 'heidi@example.com' }));
      const audit = broker.logs
        .records()
        .filter(
          (r) => r.audit === true && r.event === 'enterprise_access_revoked' && r.principal === 'heidi@example.com',
        );
      expect(audit).toEqual([expect.objectContaining({ actor_type: 'admin', admin: ROOT, enterprise_access_id: id })]);
      expect((await admin.delete(`/api/agents/${mailAgent}/enterprise-authorizations/${id}`)).status).toBe(404);
    });
  });
});
