import { randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import {
  AuthorizationRequestRepository,
  sessionUsable,
  type AuthorizationRequestCreate,
  type AuthorizationRequestLimits,
  type NewAuthorizationRequest,
} from './authorization-request.repository';

const LIMITS: AuthorizationRequestLimits = { maxPendingPerPrincipal: 20, maxRequestsPerMinute: 10 };
const MINUTE = 60_000;

describe.each(testBackends())('AuthorizationRequestRepository on $name', (backend) => {
  let database: Database;
  let requests: AuthorizationRequestRepository;
  const now = new Date('2026-03-01T10:00:00Z');

  beforeAll(async () => {
    const storage = await backend.storage();
    const config = testConfig({ storage });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    requests = new AuthorizationRequestRepository(database.dataSource);
  });

  afterAll(async () => {
    await database?.close();
  });

  /** An agent, a service and a permission set of the agent naming the service (offering `scopes`). */
  async function registry(scopes: string[] = ['mail.read']): Promise<{ agent: string; service: string; set: string }> {
    const [agent, service, set] = [randomUUID(), randomUUID(), randomUUID()];
    const q = (sql: string, values: unknown[]) => database.dataSource.query(sql, values);
    await q("INSERT INTO agents (id, display_name) VALUES ($1, 'Agent')", [agent]);
    await q(
      `INSERT INTO services (id, display_name, client_id, token_endpoint_auth_method, issuer_uri, authorization_endpoint, token_endpoint)
       VALUES ($1, 'Mail', 'c', 'none', 'https://idp.example.com', 'https://idp.example.com/a', 'https://idp.example.com/t')`,
      [service],
    );
    await q('INSERT INTO permission_sets (id, name) VALUES ($1, $2)', [set, `Set ${set}`]);
    await q(
      "INSERT INTO permission_set_service_scopes (permission_set_id, service_id, scopes, requirement_type, position) VALUES ($1, $2, $3, 'mandatory', 0)",
      [set, service, JSON.stringify(scopes)],
    );
    await q(
      "INSERT INTO agent_permission_sets (agent_id, permission_set_id, requirement_type, position) VALUES ($1, $2, 'mandatory', 0)",
      [agent, set],
    );
    return { agent, service, set };
  }

  function request(
    parties: { agent: string; service: string; set: string },
    overrides: Partial<NewAuthorizationRequest> = {},
  ): NewAuthorizationRequest {
    return {
      id: randomUUID(),
      principal: 'alice',
      agentId: parties.agent,
      serviceId: parties.service,
      scopes: [],
      permissionSetIds: [parties.set],
      needsGrant: true,
      needsConnection: false,
      expiresAt: new Date(now.getTime() + 10 * MINUTE),
      createdBy: 'gateway-1',
      ...overrides,
    };
  }

  const idOf = (outcome: AuthorizationRequestCreate): string =>
    outcome.kind === 'rate_limited' ? '' : outcome.record.id;
  const version = async (): Promise<number> =>
    Number(
      (await database.dataSource.query<{ version: string }[]>('SELECT version FROM approval_sync_version'))[0]?.version,
    );

  it('creates a pending request, answers the same one for the same key (scopes in any order), and reads it back', async () => {
    const parties = await registry();
    const created = await requests.create(request(parties, { scopes: ['mail.send', 'mail.read'] }), LIMITS, now);
    expect(created).toMatchObject({
      kind: 'created',
      expired: [],
      record: {
        principal: 'alice',
        agentId: parties.agent,
        serviceId: parties.service,
        scopes: ['mail.read', 'mail.send'],
        permissionSetIds: [parties.set],
        needsGrant: true,
        needsConnection: false,
        status: 'pending',
        allowedAt: null,
        answeredAt: null,
        createdBy: 'gateway-1',
      },
    });
    const again = await requests.create(
      request(parties, { scopes: ['mail.read', 'mail.send', 'mail.read'] }),
      LIMITS,
      now,
    );
    expect(again).toMatchObject({ kind: 'existing', record: { id: idOf(created) } });
    // Another scope set, another person: other requests.
    expect(idOf(await requests.create(request(parties, { scopes: ['mail.read'] }), LIMITS, now))).not.toBe(
      idOf(created),
    );
    expect(idOf(await requests.create(request(parties, { principal: 'bob' }), LIMITS, now))).not.toBe(idOf(created));
    expect(await requests.find(idOf(created))).toEqual(created.kind === 'created' ? created.record : undefined);
    expect(await requests.find(randomUUID())).toBeUndefined();
    expect(await requests.offeredPermissionSets(parties.agent, parties.service)).toEqual([
      { permissionSetId: parties.set, scopes: ['mail.read'] },
    ]);
    expect(await requests.offeredPermissionSets(parties.agent, randomUUID())).toEqual([]);
  });

  it('starts a request that asks nothing of the person allowed (a connection only)', async () => {
    const created = await requests.create(
      request(await registry(), { needsGrant: false, needsConnection: true }),
      LIMITS,
      now,
    );
    expect(created).toMatchObject({ kind: 'created', record: { allowedAt: now, status: 'pending' } });
  });

  it("expires the key's stale pending request and makes a new one in the same statement", async () => {
    const parties = await registry();
    const stale = await requests.create(request(parties, { expiresAt: new Date(now.getTime() + 1000) }), LIMITS, now);
    const later = new Date(now.getTime() + 2000);
    const fresh = await requests.create(
      request(parties, { expiresAt: new Date(later.getTime() + MINUTE) }),
      LIMITS,
      later,
    );
    expect(fresh).toMatchObject({ kind: 'created', expired: [{ id: idOf(stale), status: 'expired' }] });
    expect(idOf(fresh)).not.toBe(idOf(stale));
    expect((await requests.find(idOf(stale)))?.status).toBe('expired');
  });

  it('counts the limits: pending per person, creations per minute per (person, agent)', async () => {
    const parties = await registry();
    const limits = { maxPendingPerPrincipal: 3, maxRequestsPerMinute: 2 };
    const scoped = (scope: string, at: Date = now) =>
      requests.create(request(parties, { principal: 'carol', scopes: [scope] }), limits, at);
    expect((await scoped('a')).kind).toBe('created');
    expect((await scoped('b')).kind).toBe('created');
    expect((await scoped('c')).kind).toBe('rate_limited');
    // The pending one of a key is still answered over a limit.
    expect((await scoped('a')).kind).toBe('existing');
    const minuteLater = new Date(now.getTime() + MINUTE + 1);
    expect((await scoped('c', minuteLater)).kind).toBe('created');
    // Three pending now: the person's limit, whichever agent asks.
    const other = await registry();
    const fourth = await requests.create(request(other, { principal: 'carol' }), limits, minuteLater);
    expect(fourth.kind).toBe('rate_limited');
  });

  it('makes one request of many identical concurrent creates', async () => {
    const parties = await registry();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => requests.create(request(parties), LIMITS, now)),
    );
    expect(new Set(outcomes.map(idOf)).size).toBe(1);
    expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(1);
    const rows = await database.dataSource.query<unknown[]>(
      'SELECT id FROM authorization_requests WHERE agent_id = $1',
      [parties.agent],
    );
    expect(rows).toHaveLength(1);
  });

  it('makes one transition of racing answers, only for the owner, only while pending and unexpired; each bumps the counter', async () => {
    const parties = await registry();
    const id = idOf(await requests.create(request(parties), LIMITS, now));
    expect(await requests.allow(id, 'mallory', true, now)).toBeUndefined();
    const before = await version();
    const answers = await Promise.all([
      requests.deny(id, 'alice', now),
      requests.allow(id, 'alice', true, now),
      requests.deny(id, 'alice', now),
    ]);
    expect(answers.filter((a) => a !== undefined)).toHaveLength(1);
    expect(await version()).toBe(before + 1);
    // A statement that changes nothing bumps nothing.
    expect(await requests.deny(id, 'alice', now)).toBeUndefined();
    expect(await version()).toBe(before + 1);

    const late = idOf(await requests.create(request(await registry()), LIMITS, now));
    const afterExpiry = new Date(now.getTime() + 11 * MINUTE);
    expect(await requests.allow(late, 'alice', true, afterExpiry)).toBeUndefined();
    expect(await requests.expireIfDue(late, now)).toMatchObject({ status: 'pending' });
    expect(await requests.expireIfDue(late, afterExpiry)).toMatchObject({ status: 'expired' });
  });

  it('allows without completing, then the connection completes every allowed request of the person and service', async () => {
    const parties = await registry();
    const allowed = idOf(await requests.create(request(parties, { principal: 'dan' }), LIMITS, now));
    const notYet = idOf(await requests.create(request(parties, { principal: 'dan', scopes: ['x'] }), LIMITS, now));
    expect(await requests.allow(allowed, 'dan', false, now)).toMatchObject({ status: 'pending', allowedAt: now });
    const events: string[] = [];
    const completed = await requests.completeAllowed('dan', parties.service, now, (record) => {
      events.push(record.id);
      return Promise.resolve();
    });
    expect(completed.map((r) => [r.id, r.status, r.answeredAt])).toEqual([[allowed, 'completed', now]]);
    expect(events).toEqual([allowed]);
    expect((await requests.find(notYet))?.status).toBe('pending');
  });

  it('records the first opening of each (request, opener) once', async () => {
    const id = idOf(await requests.create(request(await registry()), LIMITS, now));
    expect(await requests.firstOpening(id, 'mallory')).toBe(true);
    expect(await requests.firstOpening(id, 'mallory')).toBe(false);
    expect(await requests.firstOpening(id, 'eve')).toBe(true);
  });

  it('reads a request and the counter together; ends due requests in batches', async () => {
    const parties = await registry();
    const id = idOf(await requests.create(request(parties, { principal: 'erin' }), LIMITS, now));
    const state = await requests.state(id);
    expect(state.version).toBe(await version());
    expect(state.record?.id).toBe(id);
    expect((await requests.state(randomUUID())).record).toBeUndefined();
    const due = await requests.expireDue(new Date(now.getTime() + 11 * MINUTE), 1000);
    expect(due.map((r) => r.id)).toContain(id);
    expect(due.every((r) => r.status === 'expired')).toBe(true);
  });
});

describe('sessionUsable', () => {
  const now = Date.parse('2026-03-01T10:00:00Z');
  const session = (overrides: Partial<Parameters<typeof sessionUsable>[0] & object> = {}) => ({
    needsReauthentication: false,
    accessTokenExpiresAt: new Date(now + 1000),
    refreshTokenEnvelope: null,
    refreshTokenExpiresAt: null,
    ...overrides,
  });

  it('needs a session not marked for reauthentication, with a live access token or a refresh token that may work', () => {
    expect(sessionUsable(undefined, now)).toBe(false);
    expect(sessionUsable(session(), now)).toBe(true);
    expect(sessionUsable(session({ accessTokenExpiresAt: null }), now)).toBe(true);
    expect(sessionUsable(session({ needsReauthentication: true }), now)).toBe(false);
    expect(sessionUsable(session({ accessTokenExpiresAt: new Date(now - 1) }), now)).toBe(false);
    const refreshable = { accessTokenExpiresAt: new Date(now - 1), refreshTokenEnvelope: Buffer.from('x') };
    expect(sessionUsable(session(refreshable), now)).toBe(true);
    expect(sessionUsable(session({ ...refreshable, refreshTokenExpiresAt: new Date(now - 1) }), now)).toBe(false);
  });
});
