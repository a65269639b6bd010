import { randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import {
  eventually,
  createPostgresDatabase,
  LogCapture,
  postgresServerUrl,
  testBackends,
  testConfig,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { PostgresListenConnection } from '../notifications/postgres-listen-connection';
import { PgliteApprovalChangeFeed, PostgresApprovalChangeFeed, type ApprovalChangeFeed } from './approval-change-feed';
import type { ApprovalRecord, CreateOutcome, CreationLimits, NewApproval } from '@broker/domain';
import { ApprovalRepository } from './approval.repository';

const LIMITS: CreationLimits = { maxPending: 50, maxPerWindow: 10, windowMs: 60_000 };

/** A LISTEN connection of its own, its heartbeat sent over `database`'s pool as the broker's is. */
function listenConnection(url: string, database: Database): PostgresListenConnection {
  const config = testConfig();
  return new PostgresListenConnection(url, {
    notify: (channel, payload) => database.dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]),
    logger: createLogger(config, new LogCapture()),
  });
}

describe.each(testBackends())('ApprovalRepository on $name', (backend) => {
  let database: Database;
  let approvals: ApprovalRepository;
  let feed: ApprovalChangeFeed;
  const announced: number[] = [];
  const now = new Date('2026-03-01T10:00:00Z');

  beforeAll(async () => {
    const storage = await backend.storage();
    const config = testConfig({ storage });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    approvals = new ApprovalRepository(database.dataSource);
    feed =
      backend.name === 'postgres'
        ? new PostgresApprovalChangeFeed(listenConnection(config.storage.postgres.connection_url as string, database))
        : new PgliteApprovalChangeFeed(config.storage.pglite.data_dir);
    await feed.start({ changed: (version) => announced.push(version), resync: () => undefined, lost: () => undefined });
  });

  afterAll(async () => {
    await feed?.stop();
    await database?.close();
  });

  /** A registered agent that alice allows (an active grant): only such an agent may ask for approvals. */
  async function newAgent(): Promise<string> {
    const id = randomUUID();
    await database.dataSource.query(
      "INSERT INTO agents (id, display_name, created_at, updated_at) VALUES ($1, 'Agent', now(), now())",
      [id],
    );
    await allow('alice', id, null);
    return id;
  }

  async function allow(principal: string, agentId: string, validUntil: Date | null): Promise<void> {
    await database.dataSource.query(
      `INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, $2, $3, $4, now(), now())
       ON CONFLICT (principal, agent_id) DO UPDATE SET valid_until = EXCLUDED.valid_until`,
      [randomUUID(), principal, agentId, validUntil],
    );
  }

  /** What a grant's deletion does to the pair's approvals: the grant row goes, then `endPair` in the same transaction. */
  function deleteGrant(
    principal: string,
    agentId: string,
  ): Promise<{ revoked: ApprovalRecord[]; expired: ApprovalRecord[] }> {
    return database.dataSource.transaction(async (manager) => {
      await manager.query('DELETE FROM grants WHERE principal = $1 AND agent_id = $2', [principal, agentId]);
      return approvals.endPair(principal, agentId, now, manager);
    });
  }

  const idOf = (outcome: CreateOutcome): string =>
    outcome.kind === 'created' || outcome.kind === 'duplicate' ? outcome.record.id : '';

  function approval(agentId: string, overrides: Partial<NewApproval> = {}): NewApproval {
    return {
      id: randomUUID(),
      principal: 'alice',
      agentId,
      toolName: 'tool',
      argumentsJson: '{"a":1}',
      argumentsHash: 'a'.repeat(64),
      metadataJson: '{}',
      riskLevel: null,
      agentSessionId: null,
      expiresAt: new Date(now.getTime() + 600_000),
      ...overrides,
    };
  }

  it('bumps the sync version with every change, in the same transaction, and announces it through the feed', async () => {
    const agent = await newAgent();
    const before = await approvals.syncVersion();
    const created = await approvals.create(approval(agent), LIMITS, now);
    expect(created.kind).toBe('created');
    const afterCreate = await approvals.syncVersion();
    expect(afterCreate).toBe(before + 1);
    await eventually(() => announced.includes(afterCreate));
    expect(announced).toContain(afterCreate);

    // A statement that changes nothing bumps nothing.
    expect(await approvals.revoke(randomUUID(), 'alice', now)).toBeUndefined();
    expect(await approvals.syncVersion()).toBe(afterCreate);

    const id = created.kind === 'created' ? created.record.id : '';
    expect(await approvals.approve(id, 'alice', 'permanent', { a: '*' }, now)).toMatchObject({
      status: 'approved',
      paramsPattern: { a: '*' },
    });
    expect(await approvals.syncVersion()).toBe(afterCreate + 1);
    const snapshot = await approvals.syncSnapshot({ principal: 'alice', agentSessionIds: [] });
    expect(snapshot.version).toBe(afterCreate + 1);
    expect(snapshot.approvals.map((a) => a.id)).toContain(id);
  });

  it("keeps another principal's approval invisible to find", async () => {
    const created = await approvals.create(approval(await newAgent()), LIMITS, now);
    const id = created.kind === 'created' ? created.record.id : '';
    expect(await approvals.find(id, 'alice')).toMatchObject({ id, agentDisplayName: 'Agent' });
    expect(await approvals.find(id, 'mallory')).toBeUndefined();
    expect(await approvals.approve(id, 'mallory', 'once', null, now)).toBeUndefined();
  });

  it('decides concurrent duplicates by the unique index and concurrent consumes by one transition', async () => {
    const agent = await newAgent();
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => approvals.create(approval(agent), LIMITS, now)));
    expect(outcomes.map((o) => o.kind).sort()).toEqual(['created', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
    const ids = new Set(outcomes.map((o) => (o.kind === 'created' || o.kind === 'duplicate' ? o.record.id : '')));
    expect(ids.size).toBe(1);
    const [id] = [...ids] as [string];
    await approvals.approve(id, 'alice', 'once', null, now);
    const consumes = await Promise.all(Array.from({ length: 5 }, () => approvals.consume(id, 'alice', agent, now)));
    expect(consumes.filter((record) => record !== undefined)).toHaveLength(1);
  });

  it('never overshoots the limits under concurrent creates (the pair lock), and rolls back the refused insert', async () => {
    const agent = await newAgent();
    const outcomes = await Promise.all(
      Array.from({ length: 14 }, (_, i) =>
        approvals.create(approval(agent, { argumentsHash: String(i).padStart(64, '0') }), LIMITS, now),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(10);
    const limited = outcomes.filter((o) => o.kind === 'rate_limited');
    expect(limited).toHaveLength(4);
    expect(limited[0]).toMatchObject({ limit: 'per_window', retryAfterMs: 60_000 });
    const rows = await database.dataSource.query<{ n: string }[]>(
      'SELECT count(*) AS n FROM approvals WHERE agent_id = $1',
      [agent],
    );
    expect(Number(rows[0]?.n)).toBe(10);
  });

  it('expires due records once, whoever sweeps, and reports the next expiry', async () => {
    const agent = await newAgent();
    const created = await approvals.create(
      approval(agent, { expiresAt: new Date(now.getTime() - 1) }),
      LIMITS,
      new Date(now.getTime() - 600_000),
    );
    expect(created.kind).toBe('created');
    const swept = await Promise.all([approvals.expireDue(now), approvals.expireDue(now)]);
    expect(swept.reduce((sum, n) => sum + n, 0)).toBe(1);
    expect(await approvals.expireDue(now)).toBe(0);
    const id = created.kind === 'created' ? created.record.id : '';
    expect(await approvals.find(id, 'alice')).toMatchObject({ status: 'expired', listed: false });
    const next = await approvals.nextExpiry();
    expect(next === undefined || next.getTime() > now.getTime()).toBe(true);
  });

  it('refuses a create for an agent the principal has no active grant for (none, or expired), inserting nothing', async () => {
    const agent = await newAgent();
    expect((await approvals.create(approval(agent, { principal: 'bob' }), LIMITS, now)).kind).toBe('grant_required');
    await allow('bob', agent, now);
    expect((await approvals.create(approval(agent, { principal: 'bob' }), LIMITS, now)).kind).toBe('grant_required');
    await allow('bob', agent, new Date(now.getTime() + 1));
    expect((await approvals.create(approval(agent, { principal: 'bob' }), LIMITS, now)).kind).toBe('created');
    const rows = await database.dataSource.query<{ n: string }[]>(
      "SELECT count(*) AS n FROM approvals WHERE agent_id = $1 AND principal = 'bob'",
      [agent],
    );
    expect(Number(rows[0]?.n)).toBe(1);
  });

  it("ends every live approval of the pair with the grant, and no other pair's; re-granting brings none back", async () => {
    const agent = await newAgent();
    const other = await newAgent();
    const create = async (agentId: string, hash: string, overrides: Partial<NewApproval> = {}) =>
      idOf(await approvals.create(approval(agentId, { argumentsHash: hash.repeat(64), ...overrides }), LIMITS, now));
    const pending = await create(agent, '1');
    const once = await create(agent, '2');
    await approvals.approve(once, 'alice', 'once', null, now);
    const session = await create(agent, '3', { agentSessionId: 's-1' });
    await approvals.approve(session, 'alice', 'session', null, now);
    const permanent = await create(agent, '4');
    await approvals.approve(permanent, 'alice', 'permanent', null, now);
    const denied = await create(agent, '5');
    await approvals.deny(denied, 'alice', 'permanent', null, now);
    const consumed = await create(agent, '6');
    await approvals.approve(consumed, 'alice', 'once', null, now);
    await approvals.consume(consumed, 'alice', agent, now);
    const stale = await create(agent, '7', { expiresAt: new Date(now.getTime() - 1) });
    const untouched = await create(other, '1');
    const before = await approvals.syncVersion();

    const ended = await deleteGrant('alice', agent);

    expect(ended.revoked.map((r) => r.id).sort()).toEqual([pending, once, session, permanent, denied].sort());
    expect(ended.expired.map((r) => r.id)).toEqual([stale]);
    for (const id of [pending, once, session, permanent, denied])
      expect(await approvals.find(id, 'alice')).toMatchObject({ status: 'revoked', listed: false, revokedAt: now });
    expect(await approvals.find(consumed, 'alice')).toMatchObject({ status: 'approved', consumed: true });
    expect(await approvals.find(untouched, 'alice')).toMatchObject({ status: 'pending', listed: true });
    expect(await approvals.syncVersion()).toBeGreaterThan(before);
    const state = await approvals.syncSnapshot({ principal: 'alice', agentSessionIds: ['s-1'] });
    expect(state.approvals.filter((a) => a.agentId === agent)).toEqual([]);
    expect((await approvals.listPermanent('alice')).map((r) => r.id)).not.toContain(permanent);

    await allow('alice', agent, null);
    expect((await approvals.find(permanent, 'alice'))?.status).toBe('revoked');
    expect(
      (await approvals.syncSnapshot({ principal: 'alice', agentSessionIds: ['s-1'] })).approvals.filter(
        (a) => a.agentId === agent,
      ),
    ).toEqual([]);
    // The ended pending request no longer holds the unique index: the same call asks anew.
    const again = await approvals.create(approval(agent, { argumentsHash: '1'.repeat(64) }), LIMITS, now);
    expect(again.kind).toBe('created');
    expect(idOf(again)).not.toBe(pending);
  });

  it('consumes a one-time approval only while its grant is active', async () => {
    const agent = await newAgent();
    const id = idOf(await approvals.create(approval(agent), LIMITS, now));
    await approvals.approve(id, 'alice', 'once', null, now);
    await allow('alice', agent, now);
    expect(await approvals.consume(id, 'alice', agent, now)).toBeUndefined();
    await allow('alice', agent, null);
    expect(await approvals.consume(id, 'alice', agent, now)).toMatchObject({ consumed: true });
  });

  it('leaves no pending request behind when creates race the grant deletion (the grant row orders them)', async () => {
    const agent = await newAgent();
    const outcomes = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) =>
        approvals.create(approval(agent, { argumentsHash: String(i).padStart(64, 'c') }), LIMITS, now),
      ),
      deleteGrant('alice', agent),
      ...Array.from({ length: 4 }, (_, i) =>
        approvals.create(approval(agent, { argumentsHash: String(i).padStart(64, 'd') }), LIMITS, now),
      ),
    ]);
    const rows = await database.dataSource.query<{ n: string }[]>(
      'SELECT count(*) AS n FROM approvals WHERE agent_id = $1 AND listed',
      [agent],
    );
    expect(Number(rows[0]?.n)).toBe(0);
    const kinds = outcomes.flatMap((o) => ('kind' in o ? [o.kind] : []));
    expect(kinds.every((kind) => kind === 'created' || kind === 'grant_required')).toBe(true);
  });
});

describe.runIf(postgresServerUrl())('PostgresApprovalChangeFeed', () => {
  let database: Database;
  let approvals: ApprovalRepository;
  let url: string;

  beforeAll(async () => {
    url = await createPostgresDatabase();
    const config = testConfig({ storage: { backend: 'postgres', postgres: { connection_url: url } } });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    approvals = new ApprovalRepository(database.dataSource);
  });

  afterAll(async () => {
    await database?.close();
  });

  it('re-establishes a lost LISTEN connection, asks for a resync, and hears changes again', async () => {
    const events: string[] = [];
    const own = new PostgresApprovalChangeFeed(listenConnection(url, database));
    await own.start({
      changed: (version) => events.push(`changed ${version}`),
      resync: () => events.push('resync'),
      lost: () => events.push('lost'),
    });
    try {
      await database.dataSource.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agent-identity-broker-listen' AND datname = current_database()",
      );
      await eventually(() => events.includes('resync'));
      expect(events.slice(0, 2)).toEqual(['lost', 'resync']);
      const agent = randomUUID();
      await database.dataSource.query(
        "INSERT INTO agents (id, display_name, created_at, updated_at) VALUES ($1, 'Agent', now(), now())",
        [agent],
      );
      await database.dataSource.query(
        "INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) VALUES ($1, 'alice', $2, NULL, now(), now())",
        [randomUUID(), agent],
      );
      await approvals.create(
        {
          id: randomUUID(),
          principal: 'alice',
          agentId: agent,
          toolName: 'tool',
          argumentsJson: '{}',
          argumentsHash: 'b'.repeat(64),
          metadataJson: '{}',
          riskLevel: null,
          agentSessionId: null,
          expiresAt: new Date(Date.now() + 600_000),
        },
        LIMITS,
        new Date(),
      );
      const version = await approvals.syncVersion();
      await eventually(() => events.includes(`changed ${version}`));
      expect(events).toContain(`changed ${version}`);
    } finally {
      await own.stop();
    }
  });
});
