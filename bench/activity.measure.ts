import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { type AnyBrokerEvent, type EventFilter, type EventToAppend } from '@broker/events';
import { Database, EventRepository } from '@broker/persistence';
import { createPostgresDatabase, startPostgresCluster, testConfig, type PostgresCluster } from '@broker/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { takeMachine } from './machine-lock';
import { QUICK } from './load';

/**
 * The end-user activity reads on a ledger of 1,000,000 events (throwaway PostgreSQL cluster):
 * 4,000 people with 200 events each and one heavy person with 200,000, 90 % token exchanges
 * (5 % of them failed), the rest spread over eight other kinds, 20 agents and 10 services.
 * Prints p50/p99 of `GET /api/activity/last-used`'s query and of the person's pages filtered by
 * kind, before (the ledger's three indexes and the former statements: `DISTINCT ON`, `type =
 * ANY(...)`) and after (migration ActivityIndexes1764130000000 and `EventRepository`'s
 * statements), A B A B, with the server's own time and the buffers each statement touched
 * (EXPLAIN ANALYZE: the work, whatever else loads the machine); then what the two extra
 * indexes cost the hot path's writes: events/s of 500-event appends of `token.exchanged`
 * (`EventRepository.append`, the ledger flusher's statement) with and without them, A B A B.
 * Numbers only; nothing asserts them. BENCH_QUICK=1: 100k events, one round.
 *
 * Alone: `npx vitest run --project measure bench/activity.measure.ts`.
 */
const EVENTS = QUICK ? 100_000 : 1_000_000;
const HEAVY = 'heavy@example.com';
/** One in five events is the heavy person's; the others go to 4,000 people (`user-N`). */
const TYPICAL = 'user-17@example.com';
const LIMIT = 50;
const APPEND_BATCH = 500;
const APPENDED_PER_RUN = QUICK ? 20_000 : 100_000;
const ROUNDS = QUICK ? 1 : 3;

const NEW_INDEXES = ['events_last_used_idx', 'events_principal_type_seq_idx'];
const CREATE_NEW_INDEXES = [
  `CREATE INDEX IF NOT EXISTS events_last_used_idx ON events (principal, agent_id, service_id, seq DESC)
    WHERE type = 'token.exchanged' AND outcome = 'success' AND principal IS NOT NULL AND agent_id IS NOT NULL AND service_id IS NOT NULL`,
  "CREATE INDEX IF NOT EXISTS events_principal_type_seq_idx ON events (principal, type, seq DESC) WHERE principal IS NOT NULL AND type <> 'token.exchanged'",
];

/** The statements before the migration (copied from EventRepository as it was). */
const COLUMNS =
  'seq::text AS seq, id, type, occurred_at, actor_type, actor_id, principal, agent_id, service_id, outcome, trace_id, details';
const FORMER_LAST_USED = `SELECT DISTINCT ON (agent_id, service_id) agent_id, service_id, occurred_at FROM events WHERE principal = $1 AND type = 'token.exchanged' AND outcome = 'success' AND agent_id IS NOT NULL AND service_id IS NOT NULL ORDER BY agent_id, service_id, seq DESC`;
function formerPage(filter: EventFilter, limit: number, before?: string): [string, unknown[]] {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (param: string) => string, value: unknown): void => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (filter.principal !== undefined) add((p) => `principal = ${p}`, filter.principal);
  if (filter.types !== undefined && filter.types.length > 0) add((p) => `type = ANY(${p}::text[])`, filter.types);
  if (before !== undefined) add((p) => `seq < ${p}::bigint`, before);
  values.push(limit + 1);
  return [
    `SELECT ${COLUMNS} FROM events ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY events.seq DESC LIMIT $${values.length}`,
    values,
  ];
}

/** 1M events in one statement: kinds, outcomes, agents and services drawn with a fixed seed. */
const LOAD = `
  INSERT INTO events (id, type, occurred_at, actor_type, actor_id, principal, agent_id, service_id, outcome, trace_id, details)
  SELECT gen_random_uuid(),
    CASE WHEN r < 0.90 THEN 'token.exchanged' WHEN r < 0.93 THEN 'session.refreshed' WHEN r < 0.95 THEN 'impersonation.decided'
         WHEN r < 0.96 THEN 'grant.created' WHEN r < 0.965 THEN 'grant.revoked' WHEN r < 0.97 THEN 'session.connected'
         WHEN r < 0.975 THEN 'session.disconnected' WHEN r < 0.99 THEN 'approval.requested' ELSE 'approval.approved' END,
    timestamptz '2026-09-01' + g * interval '7 second', 'gateway', 'gateway-1',
    CASE WHEN g % 5 = 0 THEN '${HEAVY}' ELSE 'user-' || (g % 5000) || '@example.com' END,
    ('00000000-0000-4000-8000-' || lpad(floor(random() * 20)::int::text, 12, '0'))::uuid,
    ('00000000-0000-4000-9000-' || lpad(floor(random() * 10)::int::text, 12, '0'))::uuid,
    CASE WHEN random() < 0.05 THEN 'failure' ELSE 'success' END,
    md5(g::text), '{"resource": "https://mail.example.com/api", "oauth_error": null}'::jsonb
  FROM (SELECT g, random() AS r FROM generate_series(1, $1::int) AS g) AS drawn`;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Runs `query` `runs` times (after 3 unmeasured), or fewer when it takes over `budgetMs` in all. */
async function latency(
  query: () => Promise<unknown>,
  runs: number,
  budgetMs = 20_000,
): Promise<{ runs: number; p50: number; p99: number; max: number }> {
  for (let i = 0; i < 3; i += 1) await query();
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < runs && (samples.length < 10 || performance.now() - started < budgetMs)) {
    const t = performance.now();
    await query();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return {
    runs: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: percentile(samples, 100),
  };
}

const ms = (value: number): number => Math.round(value * 100) / 100;

describe('activity reads on 1M events, and the write cost of their indexes (PostgreSQL)', () => {
  let release: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let database: Database;
  let events: EventRepository;
  const sql = <T = unknown>(text: string, values: unknown[] = []): Promise<T> =>
    database.dataSource.query<T>(text, values);
  const dropNewIndexes = async (): Promise<void> => {
    for (const name of NEW_INDEXES) await sql(`DROP INDEX IF EXISTS ${name}`);
  };
  const createNewIndexes = async (): Promise<number> => {
    const started = performance.now();
    for (const statement of CREATE_NEW_INDEXES) await sql(statement);
    await sql('ANALYZE events');
    return performance.now() - started;
  };
  /** A cursor in the middle of the heavy person's events (a page deep in the history). */
  let middle: string;

  beforeAll(async () => {
    release = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the activity benchmark needs PostgreSQL (initdb/pg_ctl)');
    const config = testConfig({
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase(cluster.url) } },
    });
    database = await Database.open(config, pino({ level: 'silent' }));
    events = new EventRepository(database.dataSource);
    // Loaded with the ledger's three indexes (the new ones are built afterwards, as the migration would on an existing ledger).
    await dropNewIndexes();
    const started = performance.now();
    await sql('SELECT setseed(0.42)');
    await sql(LOAD, [EVENTS]);
    await sql('VACUUM ANALYZE events');
    const [counts] = await sql<{ total: string; heavy: string }[]>(
      `SELECT count(*) AS total, count(*) FILTER (WHERE principal = '${HEAVY}') AS heavy FROM events`,
    );
    const [mid] = await sql<{ seq: string }[]>(
      `SELECT seq::text AS seq FROM events WHERE principal = '${HEAVY}' ORDER BY seq OFFSET $1 LIMIT 1`,
      [Math.floor(Number(counts?.heavy) / 2)],
    );
    middle = mid?.seq ?? '1';
    console.log(
      `machine: node ${process.version}, os.cpus().length = ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}`,
    );
    console.log(
      `ledger: ${Number(counts?.total).toLocaleString('en-US')} events (${HEAVY}: ${Number(counts?.heavy).toLocaleString('en-US')}; ${TYPICAL} and 3,999 others: ~200 each), loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }, 1_800_000);

  afterAll(async () => {
    await database?.close();
    cluster?.stop();
    release?.();
  });

  interface Case {
    readonly name: string;
    /** The statement before the migration. */
    readonly former: () => Promise<unknown>;
    /** EventRepository's call now (its statement captured for EXPLAIN). */
    readonly now: () => Promise<unknown>;
  }
  const cases = (): Case[] => {
    const page = (name: string, filter: EventFilter, before?: string): Case => ({
      name,
      former: () => sql(...formerPage(filter, LIMIT, before)),
      now: () => events.page(filter, LIMIT, before),
    });
    return [
      {
        name: 'last-used, heavy person (200 agent/service pairs)',
        former: () => sql(FORMER_LAST_USED, [HEAVY]),
        now: () => events.lastUsed(HEAVY),
      },
      {
        name: 'last-used, typical person',
        former: () => sql(FORMER_LAST_USED, [TYPICAL]),
        now: () => events.lastUsed(TYPICAL),
      },
      page('heavy: type=grant.revoked (0.5 %), first page', { principal: HEAVY, types: ['grant.revoked'] }),
      page('heavy: type=grant.revoked, page from the middle', { principal: HEAVY, types: ['grant.revoked'] }, middle),
      page('heavy: type=approval.denied (none), first page', { principal: HEAVY, types: ['approval.denied'] }),
      page(
        'heavy: type=grant.revoked,session.disconnected, middle',
        { principal: HEAVY, types: ['grant.revoked', 'session.disconnected'] },
        middle,
      ),
      page('heavy: type=token.exchanged (90 %), middle', { principal: HEAVY, types: ['token.exchanged'] }, middle),
      page('heavy: all 9 recorded kinds named, first page', {
        principal: HEAVY,
        types: [
          'token.exchanged',
          'session.refreshed',
          'impersonation.decided',
          'grant.created',
          'grant.revoked',
          'session.connected',
          'session.disconnected',
          'approval.requested',
          'approval.approved',
        ],
      }),
      page('typical: type=grant.revoked, first page', { principal: TYPICAL, types: ['grant.revoked'] }),
      page('heavy: no filter, first page (unchanged statement)', { principal: HEAVY }),
    ];
  };

  /**
   * The server's own time and the buffers the statement touched (EXPLAIN ANALYZE, BUFFERS):
   * the work done, whatever else runs on the machine. The statement is the one `run` sends
   * (the data source's `query` is watched while it runs once).
   */
  const explained = async (run: () => Promise<unknown>): Promise<{ ms: number; buffers: number }> => {
    const [text, values] = await (async (): Promise<[string, unknown[]]> => {
      const real = database.dataSource.query.bind(database.dataSource);
      let statement: [string, unknown[]] = ['', []];
      (database.dataSource as { query: unknown }).query = (query: string, parameters?: unknown[]) => {
        statement = [query, parameters ?? []];
        return real(query, parameters);
      };
      try {
        await run();
      } finally {
        delete (database.dataSource as { query?: unknown }).query;
      }
      return statement;
    })();
    const [result] = await sql<{ 'QUERY PLAN': { Plan: Record<string, number>; 'Execution Time': number }[] }[]>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
      values,
    );
    const plan = result?.['QUERY PLAN'][0];
    return {
      ms: plan?.['Execution Time'] ?? Number.NaN,
      buffers: (plan?.Plan['Shared Hit Blocks'] ?? 0) + (plan?.Plan['Shared Read Blocks'] ?? 0),
    };
  };

  it('1. last-used and the kind filter: before (3 indexes, former statements) and after (migration + EventRepository), A B A B', async () => {
    const rows: Record<string, string | number>[] = [];
    const measure = async (
      phase: string,
      round: number,
      which: 'former' | 'now',
      only?: (name: string) => boolean,
    ): Promise<void> => {
      for (const c of cases()) {
        if (only !== undefined && !only(c.name)) continue;
        const result = await latency(c[which], which === 'former' ? 200 : 300);
        const work = await explained(c[which]);
        rows.push({
          round,
          phase,
          query: c.name,
          runs: result.runs,
          'p50 ms': ms(result.p50),
          'p99 ms': ms(result.p99),
          'max ms': ms(result.max),
          'server ms (EXPLAIN ANALYZE)': ms(work.ms),
          'buffers read': work.buffers,
        });
      }
    };
    let built = 0;
    for (let round = 1; round <= (QUICK ? 1 : 2); round += 1) {
      await dropNewIndexes();
      await measure('before', round, 'former');
      built = await createNewIndexes();
      // The former statements with the new indexes, once: DISTINCT ON still reads every successful exchange of the person.
      if (round === 1) await measure('indexes, former SQL', round, 'former', (name) => name.startsWith('last-used'));
      await measure('after', round, 'now');
    }
    console.log(
      `\n1. activity reads, limit ${LIMIT}; the two indexes built in ${(built / 1000).toFixed(1)} s on ${EVENTS.toLocaleString('en-US')} events${QUICK ? ' (BENCH_QUICK: smoke, not a result)' : ''}`,
    );
    console.table(rows);
    const sizes = await sql<{ name: string; size: string }[]>(
      `SELECT relname AS name, pg_size_pretty(pg_relation_size(oid)) AS size FROM pg_class WHERE relname LIKE 'events%' AND relkind IN ('r', 'i') ORDER BY relname`,
    );
    console.table(sizes);
  }, 3_600_000);

  it('2. the hot path’s writes: events/s of 500-event appends with and without the two indexes, A B A B', async () => {
    const agents = Array.from({ length: 5 }, () => randomUUID());
    const services = Array.from({ length: 3 }, () => randomUUID());
    let n = 0;
    const batch = (): EventToAppend[] =>
      Array.from({ length: APPEND_BATCH }, () => {
        n += 1;
        const event: AnyBrokerEvent = {
          type: 'token.exchanged',
          actor: { type: 'gateway', id: 'gateway-1' },
          principal: `user-${(n * 7919) % 5000}@example.com`,
          agentId: agents[n % agents.length] as string,
          serviceId: services[n % services.length] as string,
          outcome: n % 20 === 0 ? 'failure' : 'success',
          traceId: randomUUID().replaceAll('-', ''),
          details: { resource: 'https://mail.example.com/api', oauth_error: n % 20 === 0 ? 'invalid_grant' : null },
        };
        return { id: randomUUID(), occurredAt: new Date(), event };
      });
    const rows: Record<string, string | number>[] = [];
    const totals: Record<string, number[]> = { 'without the two indexes': [], 'with the two indexes': [] };
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const variant of ['without the two indexes', 'with the two indexes'] as const) {
        if (variant === 'with the two indexes') await createNewIndexes();
        else await dropNewIndexes();
        const batches = Array.from({ length: APPENDED_PER_RUN / APPEND_BATCH }, batch);
        const started = performance.now();
        for (const chunk of batches) await events.append(chunk);
        const seconds = (performance.now() - started) / 1000;
        const rate = APPENDED_PER_RUN / seconds;
        totals[variant]?.push(rate);
        rows.push({
          round,
          variant,
          events: APPENDED_PER_RUN,
          'events/s': Math.round(rate),
          'ms per 500-event append': ms((seconds * 1000) / batches.length),
        });
      }
    }
    const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
    const without = mean(totals['without the two indexes'] ?? []);
    const withIndexes = mean(totals['with the two indexes'] ?? []);
    console.log(
      `\n2. appends of ${APPEND_BATCH} token.exchanged events (one connection, as the ledger's flusher), ${APPENDED_PER_RUN.toLocaleString('en-US')} per run, on the ${EVENTS.toLocaleString('en-US')}-event ledger${QUICK ? ' (BENCH_QUICK: smoke, not a result)' : ''}`,
    );
    console.table(rows);
    console.table([
      {
        comparison: 'with / without',
        'events/s': `${Math.round(withIndexes)} / ${Math.round(without)} = ${(withIndexes / without).toFixed(2)}x`,
      },
    ]);
    await createNewIndexes();
  }, 3_600_000);
});
