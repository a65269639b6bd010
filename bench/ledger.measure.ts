import { cpus } from 'node:os';
import { type AnyBrokerEvent, EventLedger } from '@broker/events';
import { type EventRepository } from '@broker/persistence';
import { currentTraceId } from '@broker/telemetry';
import { startPostgresCluster, testConfig, type PostgresCluster } from '@broker/testing';
import { Client } from 'pg';
import { storage, Store } from 'nestjs-pino/storage';
import pino from 'pino';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  benchUsers,
  createBenchDatabase,
  createRegistry,
  exchangeBody,
  expectOk,
  FreshBodies,
  seed,
  SMALL,
  startBenchBroker,
  USERS,
  type BenchDatabase,
  type BrokerOverrides,
  type Registry,
} from './deployment';
import { GatewayIssuer } from './gateway-issuer';
import {
  alternate,
  averages,
  DURATION_SECONDS,
  FORM_HEADERS,
  measureLoad,
  QUICK,
  ratio,
  table,
  WARMUP_SECONDS,
} from './load';
import { takeMachine } from './machine-lock';
import type { BrokerServer } from './servers';
import { EnvelopeCipher } from '@broker/vault';

/**
 * The benchmark for the activity ledger, on a throwaway PostgreSQL
 * cluster, shape (a) of token-exchange.measure.ts (every request a never-sent client
 * assertion and subject token, 1,000 users, 1k grants and sessions): token exchange with
 * the ledger on (the default: every exchange queues a `token.exchanged` event, written in
 * multi-row batches) vs `events.enabled: false`, alternating A B A B with one broker up at a
 * time; each ledger-on run also reports the events written per second (rows counted before
 * and after) and the events dropped. Then the hot path's own cost per exchange in
 * microseconds (building and queueing the event, no network). The grant write's "commit
 * to readable event" is zero by construction (same transaction): test/events-recording
 * asserts the event is readable the moment the grant API answers. Prints numbers; asserts
 * nothing. BENCH_QUICK=1 shortens every run (smoke only).
 */
const CONNECTIONS = 50;
const ROUNDS = QUICK ? 1 : 3;

// 1b runs first, on its own: no PostgreSQL cluster or broker running beside it.
describe('activity ledger: the hot path’s recording cost', () => {
  let release: (() => void) | undefined;

  beforeAll(async () => {
    release = await takeMachine();
  });

  afterAll(() => {
    release?.();
  });

  it('1b. what recording adds to one token exchange, in microseconds (no network, no noise)', async () => {
    // The exchange's recording: its trace id read, the event built, stamped (uuid, clock) and queued; the flusher's
    // writes go to a sink here (their cost is the database's, measured by 1 as throughput), flushed between chunks.
    const sink = { append: () => Promise.resolve() } as unknown as EventRepository;
    const ledger = new EventLedger(
      sink,
      { enabled: true, queue: { max_events: 10_000, flush_interval: 250, batch_size: 500 } },
      pino({ level: 'silent' }),
    );
    const record = (i: number): void => {
      const event: AnyBrokerEvent = {
        type: 'token.exchanged',
        actor: { type: 'gateway', id: 'gateway' },
        principal: `user-${i % 1000}@example.com`,
        agentId: '2f0c5d8e-7c36-4a55-9d7c-0b8d7b0c1a11',
        serviceId: '8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        outcome: 'success',
        traceId: currentTraceId(),
        details: { resource: 'https://bench-api.example.com', oauth_error: null },
      };
      ledger.enqueue(event);
    };
    const CHUNK = 5_000;
    const N = QUICK ? 100_000 : 1_000_000;
    // Inside a request's context, as on the token endpoint: the trace id is read from the request logger's bindings.
    const request = new Store(pino({ level: 'silent' }).child({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' }));
    const chunk = (first: number): void => {
      for (let i = 0; i < CHUNK; i += 1) record(first + i);
    };
    for (let done = 0; done < N / 10; done += CHUNK) {
      storage.run(request, () => chunk(done));
      await ledger.flush();
    }
    let elapsed = 0n;
    for (let done = 0; done < N; done += CHUNK) {
      const started = process.hrtime.bigint();
      storage.run(request, () => chunk(done));
      elapsed += process.hrtime.bigint() - started;
      await ledger.flush();
    }
    const microseconds = Number(elapsed) / 1e3 / N;
    console.log(
      `recording per token exchange (hot path: trace id, event, uuid + clock, queue): ${microseconds.toFixed(3)} µs (${N.toLocaleString('en-US')} iterations); against ~520 µs of CPU per exchange that is ${((microseconds / 520) * 100).toFixed(2)} %`,
    );
    await ledger.close();
  });

  it('1c. recording on a full queue (the writer stuck, a flood of refusals): each event drops one, in microseconds', () => {
    // The writer never returns: the queue fills to max_events, then every enqueue drops a refusal (docs/events.md).
    const stuck = { append: () => new Promise<void>(() => undefined) } as unknown as EventRepository;
    const ledger = new EventLedger(
      stuck,
      { enabled: true, queue: { max_events: 10_000, flush_interval: 3_600_000, batch_size: 500 } },
      pino({ level: 'silent' }),
    );
    const event = (i: number): AnyBrokerEvent => ({
      type: 'token.exchanged',
      actor: { type: 'gateway', id: 'gateway' },
      principal: `user-${i % 1000}@example.com`,
      agentId: '2f0c5d8e-7c36-4a55-9d7c-0b8d7b0c1a11',
      serviceId: null,
      outcome: i % 4 === 0 ? 'success' : 'failure',
      traceId: null,
      details: { resource: 'https://bench-api.example.com', oauth_error: i % 4 === 0 ? null : 'access_denied' },
    });
    const N = QUICK ? 100_000 : 1_000_000;
    for (let i = 0; i < 20_000; i += 1) ledger.enqueue(event(i));
    const started = process.hrtime.bigint();
    for (let i = 0; i < N; i += 1) ledger.enqueue(event(i));
    const microseconds = Number(process.hrtime.bigint() - started) / 1e3 / N;
    console.log(
      `recording on a full queue (one refusal dropped per event, 3 refusals : 1 issued): ${microseconds.toFixed(3)} µs per event (${N.toLocaleString('en-US')} iterations), ${ledger.queued} queued`,
    );
  });
});

describe('activity ledger benchmark (PostgreSQL)', () => {
  let release: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  let db: BenchDatabase;
  let registry: Registry;
  let fresh: FreshBodies;
  let pg: Client | undefined;
  const running = new Set<BrokerServer>();

  const start = (overrides: BrokerOverrides = {}): Promise<BrokerServer> =>
    startBenchBroker(db, issuer as GatewayIssuer, overrides);
  const exchanged = async (): Promise<number> =>
    Number(
      (await (pg as Client).query<{ n: string }>("SELECT count(*) AS n FROM events WHERE type = 'token.exchanged'"))
        .rows[0]?.n ?? 0,
    );
  const dropped = async (adminUrl: string): Promise<number> => {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    return Number(/^broker_events_dropped_total (\S+)$/m.exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    release = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the ledger benchmark needs PostgreSQL (initdb/pg_ctl)');
    issuer = await GatewayIssuer.start();
    db = await createBenchDatabase(cluster);
    const setup = await start();
    running.add(setup);
    try {
      registry = await createRegistry(setup.adminUrl, SMALL);
      const cipher = new EnvelopeCipher(testConfig({ encryption: { keys: [db.kek], current_key_id: db.kek.id } }));
      console.log(`${SMALL.label}: ${await seed(db.databaseUrl, SMALL, registry, cipher)}`);
    } finally {
      running.delete(setup);
      await setup.stop();
    }
    const users = benchUsers(SMALL);
    const agentId = registry.agentIds[0] as string;
    fresh = new FreshBodies((n) =>
      exchangeBody(
        (issuer as GatewayIssuer).clientAssertion(db.audience),
        (issuer as GatewayIssuer).subjectToken(users[n % USERS] as string, agentId, db.audience),
      ),
    );
    pg = new Client({ connectionString: db.databaseUrl });
    await pg.connect();
    console.log(
      `machine: node ${process.version}, os.cpus().length = ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}; load: autocannon in a worker thread of this process, ${CONNECTIONS} connections`,
    );
  }, 900_000);

  afterAll(async () => {
    await Promise.all([...running].map((server) => server.stop()));
    console.log(`\n${fresh?.summary() ?? ''}`);
    await pg?.end();
    await issuer?.stop();
    cluster?.stop();
    release?.();
  });

  it('1. token exchange with the ledger on vs events.enabled false (target >= 0.95x), with the ledger write rate', async () => {
    const variants = [
      { name: 'ledger on', overrides: {} },
      { name: 'ledger off', overrides: { events: { enabled: false } } },
    ];
    const notes: Record<string, string | number>[] = [];
    const rows = await alternate(ROUNDS, [{ name: '(a) fresh tokens' }], variants, async (_shape, variant, round) => {
      const server = await start(variant.overrides);
      running.add(server);
      try {
        await expectOk(
          `${server.enduserUrl}/oauth2/token`,
          exchangeBody(
            (issuer as GatewayIssuer).clientAssertion(db.audience),
            (issuer as GatewayIssuer).subjectToken(
              benchUsers(SMALL)[0] as string,
              registry.agentIds[0] as string,
              db.audience,
            ),
          ),
        );
        const bodies = fresh.ready();
        const before = await exchanged();
        const started = process.hrtime.bigint();
        const run = await measureLoad({
          url: `${server.enduserUrl}/oauth2/token`,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies,
          connections: CONNECTIONS,
        });
        fresh.spend(run);
        // The queue's last interval (250 ms) reaches the table before counting.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const wall = Number(process.hrtime.bigint() - started) / 1e9;
        const written = (await exchanged()) - before;
        notes.push({
          target: variant.name,
          round,
          'exchanges answered (warm-up + run)': run.spent,
          'events written': written,
          'events/s written (warm-up + run)': Math.round(written / wall),
          'events dropped': await dropped(server.adminUrl),
        });
        return run;
      } finally {
        running.delete(server);
        await server.stop();
      }
    });
    console.log(
      `\n1. activity ledger: token exchange shape (a) fresh tokens, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, alternating${QUICK ? ' (BENCH_QUICK: smoke, not a result)' : ''}`,
    );
    console.table(table(rows, ['p50', 'p95', 'p99']));
    console.table(notes);
    const on = averages(rows, 'ledger on', '(a) fresh tokens');
    const off = averages(rows, 'ledger off', '(a) fresh tokens');
    console.table([
      {
        comparison: 'ledger on / ledger off',
        'req/s': ratio({ value: on.rps, valid: on.valid }, { value: off.rps, valid: off.valid }),
        p99: ratio({ value: on.p99, valid: on.valid }, { value: off.p99, valid: off.valid }),
      },
    ]);
  }, 1_800_000);
});
