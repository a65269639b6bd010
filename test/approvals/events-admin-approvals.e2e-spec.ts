import { createHash } from 'node:crypto';
import {
  ApiClient,
  FrozenClock,
  http,
  startGatewayFixture,
  startTestBroker,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent } from '../support/granted-agent';
import { BOTH_SERVERS } from '../support/servers';
import { type EventType } from '@broker/events';

const ALICE = 'alice@example.com';
const ADMIN = 'root-admin@example.com';
const TTL_MS = 10 * 60_000;
/** Approval argument values: the ledger may hold their names and hash, never these. */
const SECRET_TO = 'argument-value-recipient-5e1f@example.com';
const SECRET_BODY = 'argument-value-body-9a7c31';
const SERVICE_SECRET = 'service-client-secret-3b8d2f';

interface EventRow {
  id: string;
  type: EventType;
  occurred_at: Date;
  actor_type: string;
  actor_id: string | null;
  principal: string | null;
  agent_id: string | null;
  service_id: string | null;
  outcome: string;
  trace_id: string | null;
  details: Record<string, unknown>;
}

/** The trace id a response's `traceresponse` names (`00-<trace id>-<span id>-<flags>`). */
function traceOf(response: HttpResponse): string {
  const header = response.headers.traceresponse;
  expect(typeof header).toBe('string');
  return (header as string).split('-')[1] as string;
}

/** SHA-256 hex of the canonical JSON (sorted keys, no whitespace): the approvals API's `arguments_hash`. */
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Approvals and admin writes record their events in the same transaction
 * as the change, caused here by the real HTTP actions (admin API, the gateway's and the
 * person's approvals API) on a frozen clock, on both backends.
 */
describe.each(testBackends())('approval and admin-write events on $name', (backend) => {
  let gateway: GatewayFixture;
  let admin: ApiClient;
  let alice: ApiClient;
  const clock = new FrozenClock(new Date());
  /** Every credential the scenario used: none may appear in the events table. */
  const secrets: string[] = [SECRET_TO, SECRET_BODY, SERVICE_SECRET];

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      clock,
      subjectAudience: 'gateway',
      gatewaySub: 'gateway',
      ttlSeconds: 3600,
    });
    admin = new ApiClient(gateway.broker.url('admin'), ADMIN);
    alice = new ApiClient(gateway.base, ALICE);
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const query = <T>(sql: string, parameters: unknown[] = []): Promise<T> =>
    gateway.broker.broker.runtime.database.dataSource.query<T>(sql, parameters);
  /** The events of `type`, oldest first; no flush: state changes are written in their own transaction. */
  const events = (type: EventType): Promise<EventRow[]> =>
    query<EventRow[]>('SELECT * FROM events WHERE type = $1 ORDER BY seq', [type]);
  const last = async (type: EventType): Promise<EventRow | undefined> => (await events(type)).at(-1);
  const count = async (): Promise<number> =>
    Number((await query<{ n: string }[]>('SELECT count(*) AS n FROM events'))[0]?.n);

  const byAdmin = (response: HttpResponse) => ({
    actor_type: 'admin',
    actor_id: ADMIN,
    principal: null,
    outcome: 'success',
    trace_id: traceOf(response),
  });
  const service = (name: string, resource: string, extra: Record<string, unknown> = {}) => ({
    display_name: name,
    client_id: 'mail-client',
    client_secret: SERVICE_SECRET,
    issuer_uri: 'https://idp.example.com',
    authorization_endpoint: 'https://idp.example.com/authorize',
    token_endpoint: 'https://idp.example.com/token',
    protected_resources: [resource],
    ...extra,
  });
  const newAgent = async (): Promise<string> =>
    (await admin.post('/api/agents', { display_name: 'Helper' })).json<{ id: string }>().id;

  it('agent / service / permission set created, changed, deleted: by the admin principal, with the request’s trace id, in the write’s transaction', async () => {
    const createdService = await admin.post('/api/services', service('Mail', 'https://mail.example.com'));
    expect(createdService.status, createdService.text).toBe(201);
    const serviceId = createdService.json<{ id: string }>().id;
    // Readable the moment the answer arrived: the same transaction as the service, no flush.
    expect(await last('service.created')).toMatchObject({
      ...byAdmin(createdService),
      agent_id: null,
      service_id: serviceId,
      details: { display_name: 'Mail' },
    });
    expect((await last('service.created'))?.occurred_at.getTime()).toBe(clock.nowMs());
    const changedService = await admin.put(
      `/api/services/${serviceId}`,
      service('Mail v2', 'https://mail.example.com'),
    );
    expect(changedService.status).toBe(200);
    expect(await last('service.changed')).toMatchObject({
      ...byAdmin(changedService),
      service_id: serviceId,
      details: { display_name: 'Mail v2' },
    });

    const createdSet = await admin.post('/api/permission-sets', {
      name: 'Read mail',
      service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
    });
    expect(createdSet.status).toBe(201);
    const setId = createdSet.json<{ id: string }>().id;
    expect(await last('permission_set.created')).toMatchObject({
      ...byAdmin(createdSet),
      agent_id: null,
      service_id: null,
      details: { permission_set_id: setId, name: 'Read mail' },
    });
    const changedSet = await admin.put(`/api/permission-sets/${setId}`, {
      name: 'Read all mail',
      service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
    });
    expect(changedSet.status).toBe(200);
    expect(await last('permission_set.changed')).toMatchObject({
      ...byAdmin(changedSet),
      details: { permission_set_id: setId, name: 'Read all mail' },
    });

    const createdAgent = await admin.post('/api/agents', {
      display_name: 'Mail Agent',
      permission_sets: [{ permission_set_id: setId }],
    });
    expect(createdAgent.status).toBe(201);
    const agentId = createdAgent.json<{ id: string }>().id;
    expect(await last('agent.created')).toMatchObject({
      ...byAdmin(createdAgent),
      agent_id: agentId,
      service_id: null,
      details: { display_name: 'Mail Agent' },
    });
    const changedAgent = await admin.put(`/api/agents/${agentId}`, { display_name: 'Mail Agent 2' });
    expect(changedAgent.status).toBe(200);
    expect(await last('agent.changed')).toMatchObject({
      ...byAdmin(changedAgent),
      agent_id: agentId,
      details: { display_name: 'Mail Agent 2' },
    });

    const deletedAgent = await admin.delete(`/api/agents/${agentId}`);
    expect(deletedAgent.status).toBe(204);
    expect(await last('agent.deleted')).toMatchObject({ ...byAdmin(deletedAgent), agent_id: agentId, details: {} });
    const deletedSet = await admin.delete(`/api/permission-sets/${setId}`);
    expect(deletedSet.status).toBe(204);
    expect(await last('permission_set.deleted')).toMatchObject({
      ...byAdmin(deletedSet),
      details: { permission_set_id: setId },
    });
    const deletedService = await admin.delete(`/api/services/${serviceId}`);
    expect(deletedService.status).toBe(204);
    expect(await last('service.deleted')).toMatchObject({
      ...byAdmin(deletedService),
      service_id: serviceId,
      details: {},
    });
  });

  it('client credentials issued, rotated, revoked and signing keys added, promoted, removed: identifiers only (client_id, kid)', async () => {
    const agentId = await newAgent();
    const issued = await admin.post(`/api/agents/${agentId}/client-credentials`);
    expect(issued.status).toBe(201);
    secrets.push(issued.json<{ client_secret: string }>().client_secret);
    expect(await last('client_credentials.issued')).toMatchObject({
      ...byAdmin(issued),
      agent_id: agentId,
      details: { client_id: agentId },
    });
    const rotated = await admin.post(`/api/agents/${agentId}/client-credentials`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.json<{ client_secret: string }>().client_secret);
    expect(await last('client_credentials.rotated')).toMatchObject({
      ...byAdmin(rotated),
      agent_id: agentId,
      details: { client_id: agentId },
    });
    const revoked = await admin.delete(`/api/agents/${agentId}/client-credentials`);
    expect(revoked.status).toBe(204);
    expect(await last('client_credentials.revoked')).toMatchObject({
      ...byAdmin(revoked),
      agent_id: agentId,
      details: { client_id: agentId },
    });

    // The first key was created at start-up: the broker's own event, outside any request.
    const keys = (await admin.get('/api/oauth2-server/signing-keys')).json<{
      items: { kid: string; is_current: boolean }[];
    }>().items;
    const first = keys.find((key) => key.is_current)?.kid as string;
    expect((await events('signing_key.added')).find((event) => event.details.kid === first)).toMatchObject({
      actor_type: 'broker',
      actor_id: null,
      trace_id: null,
      details: { kid: first, algorithm: 'ES256' },
    });
    const added = await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'RS256' });
    expect(added.status).toBe(201);
    const kid = added.json<{ kid: string }>().kid;
    expect(await last('signing_key.added')).toMatchObject({
      ...byAdmin(added),
      agent_id: null,
      service_id: null,
      details: { kid, algorithm: 'RS256' },
    });
    const promoted = await admin.put(`/api/oauth2-server/signing-keys/${kid}/current`);
    expect(promoted.status).toBe(200);
    expect(await last('signing_key.promoted')).toMatchObject({ ...byAdmin(promoted), details: { kid } });
    const removed = await admin.delete(`/api/oauth2-server/signing-keys/${first}`);
    expect(removed.status).toBe(204);
    expect(await last('signing_key.removed')).toMatchObject({ ...byAdmin(removed), details: { kid: first } });
  });

  it('an admin write that fails leaves no event: conflicts, refused deletes, and a replace rolled back after its partial write', async () => {
    const owner = (await admin.post('/api/services', service('Owner', 'https://owned.example.com'))).json<{
      id: string;
    }>().id;
    const other = (await admin.post('/api/services', service('Other', 'https://other.example.com'))).json<{
      id: string;
    }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Owned',
        service_scopes: [{ service_id: owner, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
    const assigned = await admin.post('/api/agents', {
      display_name: 'Assigned',
      canonical_id: 'assigned-agent',
      permission_sets: [{ permission_set_id: set }],
    });
    expect(assigned.status, assigned.text).toBe(201);
    const agent = assigned.json<{ id: string }>().id;
    const current = (await admin.get('/api/oauth2-server/signing-keys'))
      .json<{ items: { kid: string; is_current: boolean }[] }>()
      .items.find((key) => key.is_current)?.kid as string;
    const before = await count();

    // The service row is updated, then its resources collide with another service's: 409, all rolled back.
    const collided = await admin.put(`/api/services/${other}`, service('Renamed', 'https://owned.example.com'));
    expect(collided.status, collided.text).toBe(409);
    expect((await admin.get(`/api/services/${other}`)).json<{ display_name: string }>().display_name).toBe('Other');
    const refusals: [string, () => Promise<HttpResponse>, number][] = [
      ['service referenced by a permission set', () => admin.delete(`/api/services/${owner}`), 409],
      ['permission set assigned to an agent', () => admin.delete(`/api/permission-sets/${set}`), 409],
      [
        'duplicate permission set name',
        () =>
          admin.post('/api/permission-sets', {
            name: 'Owned',
            service_scopes: [{ service_id: owner, scopes: ['read'] }],
          }),
        409,
      ],
      [
        'duplicate canonical_id',
        () => admin.post('/api/agents', { display_name: 'Twin', canonical_id: 'assigned-agent' }),
        409,
      ],
      [
        'unknown agent',
        () => admin.put('/api/agents/00000000-0000-4000-8000-000000000000', { display_name: 'Nobody' }),
        404,
      ],
      ['credentials of an agent without any', () => admin.delete(`/api/agents/${agent}/client-credentials`), 404],
      ['the current signing key', () => admin.delete(`/api/oauth2-server/signing-keys/${current}`), 409],
    ];
    for (const [name, send, status] of refusals) expect((await send()).status, name).toBe(status);
    expect(await count()).toBe(before);
  });

  describe('approvals', () => {
    const args = { to: SECRET_TO, body: SECRET_BODY };
    const details = (id: string, tool: string) => ({
      approval_id: id,
      tool_name: tool,
      risk_level: 'critical',
      argument_names: ['body', 'to'],
      arguments_sha256: sha256(`{"body":${JSON.stringify(SECRET_BODY)},"to":${JSON.stringify(SECRET_TO)}}`),
    });
    let agent: string;

    beforeAll(async () => {
      // Only an agent the person allows may ask (docs/approvals.md "Grants and approvals").
      agent = (await grantedAgent({ admin: admin.baseUrl, enduser: gateway.base }, [ALICE], 'Helper')).id;
    });

    async function create(tool: string): Promise<HttpResponse> {
      const subject = await gateway.subjectToken(ALICE, agent);
      const assertion = await gateway.assertion();
      secrets.push(subject, assertion);
      return http(`${gateway.base}/api/approvals`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${subject}`,
          'x-client-assertion': assertion,
        },
        body: JSON.stringify({ metadata: {}, tool_name: tool, arguments: args, risk_level: 'critical' }),
      });
    }

    async function pending(tool: string): Promise<string> {
      const response = await create(tool);
      expect(response.status, response.text).toBe(201);
      return response.json<{ data: { id: string } }>().data.id;
    }

    const byAlice = (response: HttpResponse) => ({
      actor_type: 'principal',
      actor_id: ALICE,
      principal: ALICE,
      agent_id: agent,
      service_id: null,
      outcome: 'success',
      trace_id: traceOf(response),
    });
    const ofApproval = async (type: EventType, id: string): Promise<EventRow[]> =>
      (await events(type)).filter((event) => event.details.approval_id === id);

    it('requested (the gateway’s, once: a duplicate adds none), approved and consumed: names and hash of the arguments, never their values', async () => {
      const created = await create('send_email');
      expect(created.status).toBe(201);
      const id = created.json<{ data: { id: string } }>().data.id;
      expect(await ofApproval('approval.requested', id)).toEqual([
        expect.objectContaining({
          actor_type: 'gateway',
          actor_id: 'gateway',
          principal: ALICE,
          agent_id: agent,
          service_id: null,
          outcome: 'success',
          trace_id: traceOf(created),
          details: details(id, 'send_email'),
        }),
      ]);
      expect((await create('send_email')).status).toBe(200);
      expect(await ofApproval('approval.requested', id)).toHaveLength(1);

      const approved = await alice.post(`/api/approvals/${id}/approve`, { persistence: 'once' });
      expect(approved.status, approved.text).toBe(200);
      expect(await ofApproval('approval.approved', id)).toEqual([
        expect.objectContaining({
          ...byAlice(approved),
          details: { ...details(id, 'send_email'), persistence: 'once' },
        }),
      ]);

      const subject = await gateway.subjectToken(ALICE, agent);
      secrets.push(subject);
      const consumed = await http(`${gateway.base}/api/approvals/${id}/consume`, {
        method: 'POST',
        headers: { authorization: `Bearer ${subject}` },
      });
      expect(consumed.status, consumed.text).toBe(200);
      // Consume takes the subject token only: the gateway is the actor, unnamed.
      expect(await ofApproval('approval.consumed', id)).toEqual([
        expect.objectContaining({
          actor_type: 'gateway',
          actor_id: null,
          principal: ALICE,
          agent_id: agent,
          trace_id: traceOf(consumed),
          details: details(id, 'send_email'),
        }),
      ]);
      // Consuming again answers the first consumption and changes nothing: no second event.
      expect(
        (
          await http(`${gateway.base}/api/approvals/${id}/consume`, {
            method: 'POST',
            headers: { authorization: `Bearer ${subject}` },
          })
        ).status,
      ).toBe(200);
      expect(await ofApproval('approval.consumed', id)).toHaveLength(1);
    });

    it('denied and revoked: the person’s decisions; a decision refused (409) records nothing', async () => {
      const denied = await pending('delete_file');
      const deny = await alice.post(`/api/approvals/${denied}/deny`);
      expect(deny.status).toBe(200);
      expect(await ofApproval('approval.denied', denied)).toEqual([
        expect.objectContaining({ ...byAlice(deny), details: details(denied, 'delete_file') }),
      ]);
      const before = await count();
      expect((await alice.post(`/api/approvals/${denied}/approve`, { persistence: 'once' })).status).toBe(409);
      expect(await count()).toBe(before);

      const standing = await pending('read_file');
      expect((await alice.post(`/api/approvals/${standing}/approve`, { persistence: 'permanent' })).status).toBe(200);
      const revoke = await alice.post(`/api/approvals/${standing}/revoke`);
      expect(revoke.status).toBe(200);
      expect(await ofApproval('approval.revoked', standing)).toEqual([
        expect.objectContaining({ ...byAlice(revoke), details: details(standing, 'read_file') }),
      ]);
    });

    it('expired: the broker’s own event when the sweep expires a pending request, with no trace id', async () => {
      const id = await pending('archive_mail');
      clock.advance(TTL_MS);
      const assertion = await gateway.assertion();
      secrets.push(assertion);
      // A sync sweeps first when an exit is due (the expiry sweeper's conditional UPDATE).
      expect(
        (
          await http(`${gateway.base}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
            headers: { 'x-client-assertion': assertion },
          })
        ).status,
      ).toBe(200);
      expect(await ofApproval('approval.expired', id)).toEqual([
        expect.objectContaining({
          actor_type: 'broker',
          actor_id: null,
          principal: ALICE,
          agent_id: agent,
          outcome: 'success',
          trace_id: null,
          details: details(id, 'archive_mail'),
        }),
      ]);
    });

    it('expired: also when a new request of the pair expires its stale pending first, in the create’s transaction', async () => {
      const stale = await pending('label_mail');
      clock.advance(TTL_MS);
      // The same call again: the stale pending is expired under the pair's lock, then the new one is created.
      const again = await pending('label_mail');
      expect(again).not.toBe(stale);
      expect(await ofApproval('approval.expired', stale)).toEqual([
        expect.objectContaining({
          actor_type: 'broker',
          actor_id: null,
          trace_id: null,
          details: details(stale, 'label_mail'),
        }),
      ]);
      expect(await ofApproval('approval.requested', again)).toHaveLength(1);
    });

    it('revoked with the grant: one approval.revoked per live approval, by the person, in the revocation’s transaction; a refused create records nothing', async () => {
      const waiting = await pending('move_file');
      const standing = await pending('copy_file');
      expect((await alice.post(`/api/approvals/${standing}/approve`, { persistence: 'permanent' })).status).toBe(200);
      const revoke = await alice.delete(`/api/consent/agents/${agent}/grants`);
      expect(revoke.status, revoke.text).toBe(204);
      expect(await ofApproval('approval.revoked', waiting)).toEqual([
        expect.objectContaining({ ...byAlice(revoke), details: details(waiting, 'move_file') }),
      ]);
      expect(await ofApproval('approval.revoked', standing)).toEqual([
        expect.objectContaining({ ...byAlice(revoke), details: details(standing, 'copy_file') }),
      ]);
      expect(await last('grant.revoked')).toMatchObject({ ...byAlice(revoke), details: {} });
      const before = await count();
      const refused = await create('move_file');
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json<{ error: string }>().error).toBe('grant_required');
      expect(await count()).toBe(before);
    });
  });

  it('after the scenario the events table holds no approval argument value, client secret, private key or token used', async () => {
    const keys = await query<{ private_key_envelope: Buffer }[]>('SELECT private_key_envelope FROM signing_keys');
    const forbidden = [
      ...secrets,
      ...keys.flatMap((key) => [key.private_key_envelope.toString('base64'), key.private_key_envelope.toString('hex')]),
    ];
    const dump = JSON.stringify(await query<unknown[]>('SELECT * FROM events'));
    expect(dump).toContain('approval.expired');
    expect(forbidden.length).toBeGreaterThan(10);
    for (const secret of forbidden) expect(dump.includes(secret), 'a secret in the events table').toBe(false);
    // No private JWK member either.
    expect(dump).not.toMatch(/"d"\s*:/);
  });
});

describe('events.enabled false', () => {
  it('records nothing, and the writes still work', async () => {
    const broker = await startTestBroker({ servers: BOTH_SERVERS, config: { events: { enabled: false } } });
    try {
      const admin = new ApiClient(broker.url('admin'));
      const agent = await admin.post('/api/agents', { display_name: 'Quiet' });
      expect(agent.status).toBe(201);
      expect((await admin.post(`/api/agents/${agent.json<{ id: string }>().id}/client-credentials`)).status).toBe(201);
      expect((await admin.delete(`/api/agents/${agent.json<{ id: string }>().id}`)).status).toBe(204);
      const rows = await broker.broker.runtime.database.dataSource.query<{ n: string }[]>(
        'SELECT count(*) AS n FROM events',
      );
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      await broker.stop();
    }
  });
});
