import { randomUUID } from 'node:crypto';
import { AuthorizationSessionTokens } from '@broker/oauth-server';
import { SessionRepository } from '@broker/persistence';
import { ApiClient, FrozenClock, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const UNKNOWN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

interface GrantView {
  id: string;
  principal: string;
  agent_id: string;
  valid_until: string | null;
  granted_permission_sets: Record<string, string[]>;
  created_at: string;
  updated_at: string;
}

describe('consent and grants', () => {
  const clock = new FrozenClock('2026-06-01T12:00:00.000Z');
  let broker: TestBroker;
  let admin: ApiClient;
  let alice: ApiClient;
  let bob: ApiClient;
  let reg: RegistryFixture;
  let tokens: AuthorizationSessionTokens;
  const grantsPath = (agent: string): string => `/api/consent/agents/${agent}/grants`;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(broker.url('enduser'), ALICE);
    bob = new ApiClient(broker.url('enduser'), BOB);
    reg = await createRegistry(admin);
    tokens = broker.broker.server('enduser').app.get(AuthorizationSessionTokens);
  });

  afterAll(async () => {
    await broker.stop();
  });

  const authorizeUrl = (agent: string): string =>
    `${broker.url('enduser')}/oauth2/authorize?client_id=${agent}&response_type=code&redirect_uri=${encodeURIComponent('https://agent.example.com/cb')}&state=xyz&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256`;
  const sessionToken = (agent: string, principal = ALICE): Promise<string> =>
    tokens.issue({ agentId: agent, principal, originalUrl: authorizeUrl(agent), cimd: null });

  it('GET /api/me returns the caller', async () => {
    const response = await alice.get('/api/me');
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ data: { principal: ALICE, display_name: ALICE, picture_url: null } });
    expect((await alice.as(null).get('/api/me')).status).toBe(401);
  });

  it('lists no delegations before any grant', async () => {
    expect((await alice.get('/api/consent/agents')).json()).toEqual({ data: [] });
  });

  describe('agent detail', () => {
    it('shows the agent, its permission sets and the services they cover', async () => {
      const response = await alice.get(`/api/consent/agents/${reg.agent}`);
      expect(response.status).toBe(200);
      const { data } = response.json<{ data: Record<string, unknown> }>();
      expect(data.agent).toMatchObject({
        id: reg.agent,
        display_name: 'Mail Agent',
        description: 'Reads mail',
        canonical_id: null,
      });
      expect(data.authorization_context).toBeNull();
      expect(data.cimd).toBeNull();
      expect(data.permission_sets).toEqual([
        expect.objectContaining({
          id: reg.readMail,
          requirement_type: 'mandatory',
          services: [
            { service_id: reg.mail, scopes: ['mail.read'] },
            { service_id: reg.files, scopes: ['files.read'] },
          ],
        }),
        expect.objectContaining({ id: reg.allFiles, requirement_type: 'optional' }),
        expect.objectContaining({ id: reg.calendarSet, requirement_type: 'mandatory' }),
      ]);
      const services = data.services as Record<string, unknown>[];
      const mail = services.find((s) => s.id === reg.mail);
      // require_all_scopes: the sorted, de-duplicated union over the agent's sets.
      expect(mail).toEqual({
        id: reg.mail,
        display_name: 'mail',
        logo_url: 'https://cdn.example.com/mail.png',
        requirement_type: 'require_all_scopes',
        connection_status: 'not_connected',
        permissions: [
          { scope: 'mail.read', description: 'Read your mail' },
          { scope: 'mail.send', description: 'Send mail as you' },
        ],
      });
      expect(services.find((s) => s.id === reg.files)).toMatchObject({
        requirement_type: 'mandatory',
        permissions: [
          { scope: 'files.read', description: 'Read your files' },
          { scope: 'files.write', description: 'files.write' },
        ],
      });
    });

    it("reports the caller's own connection status only", async () => {
      const sessions = broker.broker.server('enduser').app.get(SessionRepository);
      const now = clock.now();
      await sessions.upsert({
        id: randomUUID(),
        principal: ALICE,
        serviceId: reg.files,
        accessTokenEnvelope: Buffer.from('sealed'),
        refreshTokenEnvelope: null,
        tokenType: 'Bearer',
        scopes: ['files.read'],
        accessTokenExpiresAt: null,
        refreshTokenExpiresAt: null,
        initiatedAt: now,
        updatedAt: now,
      });
      const status = async (client: ApiClient): Promise<unknown> =>
        (await client.get(`/api/consent/agents/${reg.agent}`))
          .json<{ data: { services: { id: string; connection_status: string }[] } }>()
          .data.services.find((s) => s.id === reg.files)?.connection_status;
      expect(await status(alice)).toBe('connected');
      expect(await status(bob)).toBe('not_connected');
    });

    it('adds the authorization context for a valid session token (and the CIMD block when carried)', async () => {
      const token = await sessionToken(reg.agent);
      const { data } = (await alice.get(`/api/consent/agents/${reg.agent}?session_token=${token}`)).json<{
        data: Record<string, unknown>;
      }>();
      expect(data.authorization_context).toEqual({
        agent_id: reg.agent,
        principal: ALICE,
        original_url: authorizeUrl(reg.agent),
        expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
        expires_in: 600,
      });
      const cimd = {
        client_id_url: 'https://agent.example.com/client.json',
        redirect_uri: 'https://agent.example.com/cb',
        verified_domain: 'agent.example.com',
        requested_scopes: ['mail.read'],
        logo_uri: null,
      };
      const cimdToken = await tokens.issue({
        agentId: reg.agent,
        principal: ALICE,
        originalUrl: authorizeUrl(reg.agent),
        cimd,
      });
      expect(
        (await alice.get(`/api/consent/agents/${reg.agent}?session_token=${cimdToken}`)).json<{
          data: { cimd: unknown };
        }>().data.cimd,
      ).toEqual(cimd);
    });

    it('rejects a bad, foreign-agent or foreign-user session token', async () => {
      const path = `/api/consent/agents/${reg.agent}?session_token=`;
      expect((await alice.get(`${path}garbage`)).json()).toEqual({
        error: 'session_expired',
        message: 'the authorization session is invalid or has expired: start the authorization again',
      });
      expect((await alice.get(`${path}${await sessionToken(UNKNOWN)}`)).status).toBe(400);
      const foreign = await alice.get(`${path}${await sessionToken(reg.agent, BOB)}`);
      expect(foreign.status).toBe(403);
      expect(foreign.json<{ error: string }>().error).toBe('forbidden');
    });

    it('answers 404 for an unknown agent and 400 bad request for a malformed id', async () => {
      const unknown = await alice.get(`/api/consent/agents/${UNKNOWN}`);
      expect(unknown.status).toBe(404);
      expect(unknown.json()).toEqual({ error: 'not_found', message: `no agent ${UNKNOWN}` });
      expect((await alice.get('/api/consent/agents/nope')).json<{ error: string }>().error).toBe('bad request');
    });
  });

  describe('grants', () => {
    it('creates a grant (201 {data}, no redirect_url), returns it on GET and in the delegation list', async () => {
      const response = await alice.post(grantsPath(reg.agent), {
        granted_permission_sets: { [reg.readMail]: [reg.mail, reg.files] },
      });
      expect(response.status).toBe(201);
      const body = response.json<{ data: GrantView }>();
      expect(Object.keys(body)).toEqual(['data']);
      expect(body.data).toMatchObject({
        principal: ALICE,
        agent_id: reg.agent,
        valid_until: null,
        granted_permission_sets: { [reg.readMail]: [reg.mail, reg.files] },
      });
      expect(Object.keys(body.data).sort()).toEqual([
        'agent_id',
        'created_at',
        'granted_permission_sets',
        'id',
        'principal',
        'updated_at',
        'valid_until',
      ]);
      expect((await alice.get(grantsPath(reg.agent))).json()).toEqual({ data: [body.data] });
      expect((await alice.get('/api/consent/agents')).json()).toEqual({
        data: [
          {
            agent_id: reg.agent,
            display_name: 'Mail Agent',
            logo_url: null,
            active_grant_count: 2,
            last_modified_at: body.data.updated_at,
            expires_at: null,
            live_sessions: 0,
            resources: [],
          },
        ],
      });
    });

    it('replaces the grant wholesale (not merged), keeping its id', async () => {
      const before = (await alice.get(grantsPath(reg.agent))).json<{ data: GrantView[] }>().data[0] as GrantView;
      clock.advance(1_000);
      const validUntil = new Date(clock.nowMs() + 3_600_000).toISOString();
      const replaced = (
        await alice.post(grantsPath(reg.agent), {
          granted_permission_sets: { [reg.allFiles]: [reg.files] },
          valid_until: validUntil,
        })
      ).json<{ data: GrantView }>().data;
      expect(replaced).toMatchObject({
        id: before.id,
        created_at: before.created_at,
        valid_until: validUntil,
        granted_permission_sets: { [reg.allFiles]: [reg.files] },
      });
      expect(replaced.updated_at).not.toBe(before.updated_at);
      expect(
        (await alice.get('/api/consent/agents')).json<{ data: { active_grant_count: number; expires_at: string }[] }>()
          .data[0],
      ).toMatchObject({ active_grant_count: 1, expires_at: validUntil });
    });

    it('reads valid_until: null as indefinite (documented null), also when replacing a dated grant', async () => {
      const dated = new Date(clock.nowMs() + 3_600_000).toISOString();
      expect(
        (
          await alice.post(grantsPath(reg.agent), {
            granted_permission_sets: { [reg.readMail]: [reg.mail] },
            valid_until: dated,
          })
        ).json<{ data: GrantView }>().data.valid_until,
      ).toBe(dated);
      const response = await alice.post(grantsPath(reg.agent), {
        granted_permission_sets: { [reg.readMail]: [reg.mail] },
        valid_until: null,
      });
      expect(response.status).toBe(201);
      expect(response.json<{ data: GrantView }>().data.valid_until).toBeNull();
      expect(
        (await alice.get('/api/consent/agents')).json<{ data: { expires_at: string | null }[] }>().data[0]?.expires_at,
      ).toBeNull();
    });

    it('deletes the grant with {} or [] (204)', async () => {
      for (const empty of [{}, []]) {
        await alice.post(grantsPath(reg.agent), { granted_permission_sets: { [reg.readMail]: [reg.mail] } });
        const response = await alice.post(grantsPath(reg.agent), { granted_permission_sets: empty });
        expect(response.status).toBe(204);
        expect(response.text).toBe('');
        expect((await alice.get(grantsPath(reg.agent))).json()).toEqual({ data: [] });
      }
    });

    describe('validation', () => {
      const cases: [string, () => unknown, number, string][] = [
        [
          'a permission set not assigned to the agent',
          () => ({ granted_permission_sets: { [UNKNOWN]: [reg.mail] } }),
          400,
          'invalid_permission_set',
        ],
        [
          'a service that is not part of the set',
          () => ({ granted_permission_sets: { [reg.readMail]: [reg.calendar] } }),
          400,
          'invalid_permission_set',
        ],
        [
          'a service left without any scope',
          () => ({ granted_permission_sets: { [reg.calendarSet]: [reg.calendar] } }),
          400,
          'invalid scopes',
        ],
        [
          'valid_until in the past',
          () => ({ granted_permission_sets: { [reg.readMail]: [reg.mail] }, valid_until: '2020-01-01T00:00:00Z' }),
          400,
          'invalid request',
        ],
        [
          'valid_until without a time zone',
          () => ({ granted_permission_sets: { [reg.readMail]: [reg.mail] }, valid_until: '2030-01-01T00:00:00' }),
          400,
          'invalid request',
        ],
        [
          'a non-UUID permission set key',
          () => ({ granted_permission_sets: { nope: [reg.mail] } }),
          400,
          'invalid request',
        ],
        [
          'a non-array service list',
          () => ({ granted_permission_sets: { [reg.readMail]: reg.mail } }),
          400,
          'invalid request',
        ],
        ['an empty service list', () => ({ granted_permission_sets: { [reg.readMail]: [] } }), 400, 'invalid request'],
        ['a string instead of an object', () => ({ granted_permission_sets: 'all' }), 400, 'invalid request'],
        ['a missing granted_permission_sets', () => ({}), 400, 'invalid request'],
        // A list refuses null: only `{}` or `[]` deletes.
        ['a null granted_permission_sets', () => ({ granted_permission_sets: null }), 400, 'invalid request'],
        [
          'a valid_until that is not a string',
          () => ({ granted_permission_sets: { [reg.readMail]: [reg.mail] }, valid_until: 2_000_000_000 }),
          400,
          'invalid request',
        ],
        ['an unknown field', () => ({ granted_permission_sets: {}, extra: true }), 400, 'invalid request'],
      ];
      for (const [name, body, status, error] of cases) {
        it(`rejects ${name} with ${status} ${error}`, async () => {
          const response = await alice.post(grantsPath(reg.agent), body());
          expect(response.status).toBe(status);
          const payload = response.json<{ error: string; message: string; details?: unknown[] }>();
          expect(payload.error).toBe(error);
          expect(payload.message.length).toBeGreaterThan(0);
          expect(payload.details?.length ?? 0).toBeGreaterThan(0);
        });
      }
    });

    it("isolates users: B never sees or deletes A's grant", async () => {
      await alice.post(grantsPath(reg.agent), { granted_permission_sets: { [reg.readMail]: [reg.mail] } });
      expect((await bob.get(grantsPath(reg.agent))).json()).toEqual({ data: [] });
      expect((await bob.get('/api/consent/agents')).json()).toEqual({ data: [] });
      const denied = await bob.delete(grantsPath(reg.agent));
      expect(denied.status).toBe(404);
      expect((await alice.get(grantsPath(reg.agent))).json<{ data: unknown[] }>().data).toHaveLength(1);
      // B's own grant does not touch A's.
      await bob.post(grantsPath(reg.agent), { granted_permission_sets: { [reg.allFiles]: [reg.files] } });
      expect(
        (await alice.get(grantsPath(reg.agent))).json<{ data: GrantView[] }>().data[0]?.granted_permission_sets,
      ).toEqual({ [reg.readMail]: [reg.mail] });
      expect((await bob.delete(grantsPath(reg.agent))).status).toBe(204);
      expect((await alice.get(grantsPath(reg.agent))).json<{ data: unknown[] }>().data).toHaveLength(1);
    });

    it('revokes with DELETE (204, then 404) without ending third-party sessions', async () => {
      await alice.post(grantsPath(reg.agent), { granted_permission_sets: { [reg.readMail]: [reg.files] } });
      expect((await alice.delete(grantsPath(reg.agent))).status).toBe(204);
      const again = await alice.delete(grantsPath(reg.agent));
      expect(again.status).toBe(404);
      expect(again.json<{ error: string }>().error).toBe('not_found');
      const files = (await alice.get(`/api/consent/agents/${reg.agent}`))
        .json<{ data: { services: { id: string; connection_status: string }[] } }>()
        .data.services.find((s) => s.id === reg.files);
      expect(files?.connection_status).toBe('connected');
    });

    it('treats a grant whose valid_until has passed as absent everywhere', async () => {
      const validUntil = new Date(clock.nowMs() + 2_000).toISOString();
      expect(
        (
          await alice.post(grantsPath(reg.agent), {
            granted_permission_sets: { [reg.readMail]: [reg.mail] },
            valid_until: validUntil,
          })
        ).status,
      ).toBe(201);
      expect((await alice.get('/api/consent/agents')).json<{ data: unknown[] }>().data).toHaveLength(1);
      clock.advance(3_000);
      expect((await alice.get(grantsPath(reg.agent))).json()).toEqual({ data: [] });
      expect((await alice.get('/api/consent/agents')).json()).toEqual({ data: [] });
      expect((await alice.delete(grantsPath(reg.agent))).status).toBe(404);
      // A new POST after expiry creates a fresh grant.
      const fresh = (
        await alice.post(grantsPath(reg.agent), { granted_permission_sets: { [reg.readMail]: [reg.mail] } })
      ).json<{ data: GrantView }>().data;
      expect(fresh.created_at).toBe(clock.now().toISOString());
    });

    it('answers 404 for grants of an unknown agent', async () => {
      expect((await alice.get(grantsPath(UNKNOWN))).status).toBe(404);
      expect((await alice.post(grantsPath(UNKNOWN), { granted_permission_sets: {} })).status).toBe(404);
      expect((await alice.delete(grantsPath(UNKNOWN))).status).toBe(404);
    });
  });

  describe('grants with an authorization session token', () => {
    it('returns 201 with redirect_url = the original authorization URL, parameters intact', async () => {
      const response = await alice.post(`${grantsPath(reg.agent)}?session_token=${await sessionToken(reg.agent)}`, {
        granted_permission_sets: { [reg.readMail]: [reg.mail] },
      });
      expect(response.status).toBe(201);
      const body = response.json<{ data: GrantView; redirect_url: string }>();
      expect(body.redirect_url).toBe(authorizeUrl(reg.agent));
      const resumed = new URL(body.redirect_url);
      expect(Object.fromEntries(resumed.searchParams)).toEqual({
        client_id: reg.agent,
        response_type: 'code',
        redirect_uri: 'https://agent.example.com/cb',
        state: 'xyz',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
    });

    it('rejects an invalid token (400 session_expired) and changes nothing', async () => {
      await alice.post(grantsPath(reg.agent), { granted_permission_sets: { [reg.readMail]: [reg.mail] } });
      const response = await alice.post(`${grantsPath(reg.agent)}?session_token=not-a-token`, {
        granted_permission_sets: { [reg.allFiles]: [reg.files] },
      });
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('session_expired');
      expect(
        (await alice.get(grantsPath(reg.agent))).json<{ data: GrantView[] }>().data[0]?.granted_permission_sets,
      ).toEqual({ [reg.readMail]: [reg.mail] });
    });

    it('rejects an expired token with 400 session_expired', async () => {
      const token = await sessionToken(reg.agent);
      clock.advance(10 * 60_000 + 1_000);
      const response = await alice.post(`${grantsPath(reg.agent)}?session_token=${token}`, {
        granted_permission_sets: { [reg.readMail]: [reg.mail] },
      });
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('session_expired');
    });

    it('rejects a token for another agent with 400 session_expired', async () => {
      const other = (await admin.post('/api/agents', { display_name: 'Other' })).json<{ id: string }>().id;
      const response = await alice.post(`${grantsPath(reg.agent)}?session_token=${await sessionToken(other)}`, {
        granted_permission_sets: { [reg.readMail]: [reg.mail] },
      });
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('session_expired');
    });

    it('rejects a token for another principal with 403 forbidden', async () => {
      const response = await alice.post(
        `${grantsPath(reg.agent)}?session_token=${await sessionToken(reg.agent, BOB)}`,
        { granted_permission_sets: { [reg.readMail]: [reg.mail] } },
      );
      expect(response.status).toBe(403);
      expect(response.json<{ error: string }>().error).toBe('forbidden');
    });
  });

  it('orders delegations by display name, ties by agent id', async () => {
    const carol = new ApiClient(broker.url('enduser'), 'carol@example.com');
    const ids: Record<string, string[]> = { Zeta: [], Same: [], Alpha: [] };
    for (const name of ['Zeta', 'Same', 'Alpha', 'Same', 'Same']) {
      const fixture = await createRegistry(admin, name);
      (ids[name] as string[]).push(fixture.agent);
      expect(
        (
          await carol.post(grantsPath(fixture.agent), {
            granted_permission_sets: { [fixture.readMail]: [fixture.mail] },
          })
        ).status,
      ).toBe(201);
    }
    const listed = (await carol.get('/api/consent/agents')).json<{
      data: { agent_id: string; display_name: string }[];
    }>().data;
    expect(listed.map((d) => d.display_name)).toEqual(['Alpha', 'Same', 'Same', 'Same', 'Zeta']);
    expect(listed.filter((d) => d.display_name === 'Same').map((d) => d.agent_id)).toEqual(
      [...(ids.Same as string[])].sort(),
    );
  });

  describe('admin deletions and grants', () => {
    it('refuses to delete a service or permission set an active grant references (409), allows it once the grant expired', async () => {
      const fixture = await createRegistry(admin, 'Deletion Agent');
      const dave = new ApiClient(broker.url('enduser'), 'dave@example.com');
      const validUntil = new Date(clock.nowMs() + 60_000).toISOString();
      expect(
        (
          await dave.post(grantsPath(fixture.agent), {
            granted_permission_sets: { [fixture.allFiles]: [fixture.mail] },
            valid_until: validUntil,
          })
        ).status,
      ).toBe(201);
      // Take the set off the agent and the service out of the set: only the grant references them now.
      await admin.put(`/api/agents/${fixture.agent}`, {
        display_name: 'Deletion Agent',
        permission_sets: [{ permission_set_id: fixture.readMail }],
      });
      await admin.put(`/api/permission-sets/${fixture.readMail}`, {
        name: 'renamed',
        service_scopes: [{ service_id: fixture.files, scopes: ['files.read'] }],
      });
      await admin.put(`/api/permission-sets/${fixture.allFiles}`, {
        name: 'renamed 2',
        service_scopes: [{ service_id: fixture.files, scopes: ['files.read'] }],
      });

      const service = await admin.delete(`/api/services/${fixture.mail}`);
      expect(service.status).toBe(409);
      expect(service.json<{ error: string }>().error).toBe('conflict');
      const set = await admin.delete(`/api/permission-sets/${fixture.allFiles}`);
      expect(set.status).toBe(409);
      expect(set.json<{ error: string }>().error).toBe('conflict');

      clock.advance(61_000);
      expect((await admin.delete(`/api/services/${fixture.mail}`)).status).toBe(204);
      expect((await admin.delete(`/api/permission-sets/${fixture.allFiles}`)).status).toBe(204);
    });

    it('deleting an agent removes its grants', async () => {
      const fixture = await createRegistry(admin, 'Short-lived Agent');
      await alice.post(grantsPath(fixture.agent), { granted_permission_sets: { [fixture.readMail]: [fixture.mail] } });
      expect((await admin.delete(`/api/agents/${fixture.agent}`)).status).toBe(204);
      const rows = await broker.broker.runtime.database.dataSource.query<unknown[]>(
        'SELECT 1 FROM grants WHERE agent_id = $1',
        [fixture.agent],
      );
      expect(rows).toEqual([]);
    });
  });

  it('audits every grant change without credentials', async () => {
    const fixture = await createRegistry(admin, 'Audited Agent');
    const erin = new ApiClient(broker.url('enduser'), 'erin@example.com');
    const token = await sessionToken(fixture.agent, 'erin@example.com');
    await erin.post(`${grantsPath(fixture.agent)}?session_token=${token}`, {
      granted_permission_sets: { [fixture.readMail]: [fixture.mail] },
    });
    await erin.post(grantsPath(fixture.agent), {
      granted_permission_sets: { [fixture.readMail]: [fixture.mail, fixture.files] },
    });
    await erin.delete(grantsPath(fixture.agent));
    const records = broker.logs.records().filter((r) => r.audit === true && r.principal === 'erin@example.com');
    expect(records.map((r) => [r.event, r.outcome])).toEqual([
      ['grant_created', 'created'],
      ['grant_replaced', 'replaced'],
      ['grant_deleted', 'revoked'],
    ]);
    expect(records[1]).toMatchObject({
      agent_id: fixture.agent,
      permission_set_ids: [fixture.readMail],
      service_ids: [fixture.mail, fixture.files],
    });
    for (const record of records) expect(record.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(broker.logs.leaked([token])).toEqual([]);
  });
});

describe.each(testBackends())('grant upsert under concurrency on $name', (backend) => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { storage: await backend.storage() } });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('100 concurrent POSTs for one user and agent leave exactly one grant, equal to one of the bodies', async () => {
    const admin = new ApiClient(broker.url('admin'));
    const reg = await createRegistry(admin);
    const user = new ApiClient(broker.url('enduser'), 'racer@example.com');
    const bodies = Array.from({ length: 100 }, (_, i) => {
      const choice = i % 3;
      const sets =
        choice === 0
          ? { [reg.readMail]: [reg.mail] }
          : choice === 1
            ? { [reg.readMail]: [reg.files] }
            : { [reg.allFiles]: [reg.files, reg.mail] };
      return {
        granted_permission_sets: sets,
        valid_until: i % 2 === 0 ? null : `2099-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00.000Z`,
      };
    });
    const responses = await Promise.all(
      bodies.map((body) => user.post(`/api/consent/agents/${reg.agent}/grants`, body)),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(100).fill(201));
    const rows = await broker.broker.runtime.database.dataSource.query<{ id: string }[]>(
      'SELECT id FROM grants WHERE principal = $1 AND agent_id = $2',
      ['racer@example.com', reg.agent],
    );
    expect(rows).toHaveLength(1);
    const stored = (await user.get(`/api/consent/agents/${reg.agent}/grants`)).json<{ data: GrantView[] }>().data;
    expect(stored).toHaveLength(1);
    const final = stored[0] as GrantView;
    expect(
      bodies.some(
        (body) =>
          JSON.stringify(body.granted_permission_sets) === JSON.stringify(final.granted_permission_sets) &&
          body.valid_until === final.valid_until,
      ),
    ).toBe(true);
  });
});
