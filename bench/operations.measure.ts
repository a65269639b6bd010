import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import {
  ApiClient,
  completeAuthorization,
  http,
  startPostgresCluster,
  startThirdPartyProvider,
  testConfig,
  type PostgresCluster,
  type ThirdPartyProvider,
} from '@broker/testing';
import { BrokerMetrics } from '@broker/telemetry';
import { EnvelopeCipher, REFRESH_MARGIN_MS } from '@broker/vault';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  adminApi,
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
  EXCHANGE_RESOURCE,
  FORM_HEADERS,
  measureLoad,
  QUICK,
  ratio,
  table,
  WARMUP_SECONDS,
  type Measurement,
  type Row,
} from './load';
import { takeMachine } from './machine-lock';
import { cpuSecondsBetween, startScriptServer, treeCpuTicks, type ServerProcess } from './servers';

/**
 * The operations benchmark: what operating the broker costs on the token exchange,
 * on a throwaway PostgreSQL cluster, shape (a) of token-exchange.measure.ts (every request
 * a never-sent client assertion and subject token, 1,000 users, 1k grants and sessions).
 * Four comparisons, each alternating A B A B with one server process tree up at a time
 * (started for its run, stopped after; every broker on the same database and port):
 * 1. metrics on (the default) vs `telemetry.metrics.enabled: false`;
 * 2. tracing at ratio 1.0 exporting to a loopback OTLP sink vs tracing off;
 * 3. `server.workers: 2` vs `1`, next to the reference server with 2 and 1 cluster workers;
 * 4. proactive refresh on vs off while 10 % of the sessions (real refresh tokens at
 *    oidc-provider) expire, spread over the measured seconds of each run.
 * Each run also prints the CPU the server, PostgreSQL and this process (the load generator)
 * used: the machine's cores are shared by all three. Prints numbers; asserts nothing.
 * BENCH_QUICK=1 shortens every run (smoke only).
 */
const CONNECTIONS = 50;
const ROUNDS = 2;
const SHAPE = { name: '(a) fresh tokens' } as const;
/** Shape (b) of the token-exchange benchmark: one assertion and 1,000 users' subject tokens, reused (verified-JWT cache hits, no signature work). */
const REUSED = { name: '(b) reused tokens' } as const;
type Shape = typeof SHAPE | typeof REUSED;
/** Scenario 4: the share of the bench users whose access token expires during each run. */
const EXPIRING_SHARE = 0.1;
/**
 * Scenario 4, sweep on: every second, sessions expiring within the exchange's own refresh
 * margin plus 5 s. So the sweep refreshes each expiring token about 5 s before an exchange
 * would, and its refreshes happen during the measured seconds, interleaved with the load,
 * as in a steady deployment (a window covering the whole spread would refresh everything
 * in one burst during the warm-up, hiding the sweep's own cost).
 */
const SWEEP = { enabled: true, window: `${REFRESH_MARGIN_MS / 1000 + 5}s`, interval: '1s' } as const;
/** The loopback provider's addresses are refused by issuer discovery unless allowed. */
const LOOPBACK_DISCOVERY = { discovery: { allowed_networks: ['127.0.0.0/8'] } } as const;

/** The server of one run: its token endpoint; its other URLs and its log when it is the broker. */
type RunServer = ServerProcess & {
  readonly tokenUrl: string;
  readonly enduserUrl?: string;
  readonly adminUrl?: string;
  log?(): string;
};
interface Variant {
  readonly name: string;
  start(): Promise<RunServer>;
}

/** What a run used besides its measurement: CPU (as % of one core) and scenario-specific counts. */
type RunNotes = Record<string, string | number>;

/**
 * An OTLP/HTTP collector stand-in on loopback: answers 200 `{}` to POST /v1/traces and counts
 * requests, bytes and (JSON exports) spans, so the tracing run pays a real export.
 */
class OtlpSink {
  requests = 0;
  bytes = 0;
  spans = 0;

  private constructor(private readonly server: Server) {
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        this.requests += 1;
        this.bytes += body.length;
        // Each JSON span has one "spanId" key ("parentSpanId" does not contain the quoted name).
        this.spans += body.toString('utf8').split('"spanId"').length - 1;
        response
          .writeHead(request.method === 'POST' && request.url === '/v1/traces' ? 200 : 404, {
            'content-type': 'application/json',
          })
          .end('{}');
      });
    });
  }

  static async start(): Promise<OtlpSink> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new OtlpSink(server);
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The process id of PostgreSQL's postmaster (the parent of any backend), whose tree holds every backend. */
async function postmasterPid(databaseUrl: string): Promise<number> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const stat = readFileSync(`/proc/${rows[0]?.pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } finally {
    await db.end();
  }
}

/** The non-zero `broker_vault_refreshes_total` series by trigger and outcome, from the admin /metrics (empty when metrics are off). */
async function refreshesByTrigger(adminUrl: string): Promise<string> {
  const response = await fetch(`${adminUrl}/metrics`).catch(() => undefined);
  if (response?.status !== 200) return '';
  const sums = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = /^broker_vault_refreshes_total\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null) continue;
    const labels = match[1] as string;
    const key = `${/trigger="([^"]*)"/.exec(labels)?.[1] ?? '?'}/${/outcome="([^"]*)"/.exec(labels)?.[1] ?? '?'}`;
    sums.set(key, (sums.get(key) ?? 0) + Number(match[2]));
  }
  return [...sums]
    .filter(([, value]) => value > 0)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');
}

const percentOfCore = (cpuSeconds: number, wallSeconds: number): number => Math.round((100 * cpuSeconds) / wallSeconds);

describe('operations benchmark (PostgreSQL)', () => {
  let release: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  let provider: ThirdPartyProvider | undefined;
  let sink: OtlpSink | undefined;
  let db: BenchDatabase;
  let registry: Registry;
  let postgresPid: number;
  let fresh: FreshBodies;
  /** Shape (b)'s bodies. */
  let reused: string[] = [];
  /** Scenario 4's sessions: real access and refresh tokens from the provider. */
  let expiring: string[] = [];
  const running = new Set<RunServer>();

  const broker = (name: string, overrides: BrokerOverrides = {}): Variant => ({
    name,
    start: async () => {
      const server = await startBenchBroker(db, issuer as GatewayIssuer, {
        third_party_oauth2: { jwe_keys: [db.jweKey], ...LOOPBACK_DISCOVERY },
        ...overrides,
      });
      return { ...server, tokenUrl: `${server.enduserUrl}/oauth2/token` };
    },
  });
  const reference = (workers: number): Variant => ({
    name: `reference, ${workers} worker${workers === 1 ? '' : 's'}`,
    start: async () => {
      const settings = {
        jwk: issuer?.publicJwk,
        issuer: issuer?.issuer,
        audience: db.audience,
        databaseUrl: db.databaseUrl,
        kek: db.kek,
      };
      const server = await startScriptServer('reference-server.mjs', [
        JSON.stringify(settings),
        '--workers',
        String(workers),
      ]);
      return { ...server, tokenUrl: `${server.url}/token` };
    },
  });

  /** A user's exchange that is not part of any measured pool (the last bench user, not an expiring one). */
  const probe = (): string => {
    const user = benchUsers(SMALL)[USERS - 1] as string;
    return exchangeBody(
      (issuer as GatewayIssuer).clientAssertion(db.audience),
      (issuer as GatewayIssuer).subjectToken(user, registry.agentIds[0] as string, db.audience),
    );
  };

  /**
   * A B A B over `variants`: each run starts its server, checks one exchange, signs the fresh
   * bodies, calls `before` (scenario set-up at the last moment), measures, calls `after`
   * (counts read from the still-running server) and stops the server. Prints the rows and
   * the CPU each party used.
   */
  async function compare(
    title: string,
    variants: readonly Variant[],
    hooks: {
      before?: (server: RunServer) => Promise<void>;
      after?: (server: RunServer, run: Measurement) => Promise<RunNotes>;
    } = {},
    rounds = ROUNDS,
    shape: Shape = SHAPE,
  ): Promise<Row[]> {
    const notes: RunNotes[] = [];
    const rows = await alternate(rounds, [shape], variants, async (_shape, variant, round) => {
      const server = await variant.start();
      running.add(server);
      try {
        await expectOk(server.tokenUrl, probe());
        const bodies = shape === REUSED ? reused : fresh.ready();
        await hooks.before?.(server);
        const cpu = {
          server: treeCpuTicks(server.pid),
          postgres: treeCpuTicks(postgresPid),
          self: process.cpuUsage(),
          wall: process.hrtime.bigint(),
        };
        const run = await measureLoad({
          url: server.tokenUrl,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies,
          cycle: shape === REUSED,
          connections: CONNECTIONS,
        });
        const wall = Number(process.hrtime.bigint() - cpu.wall) / 1e9;
        const self = process.cpuUsage(cpu.self);
        if (shape !== REUSED) fresh.spend(run);
        const serverAfter = treeCpuTicks(server.pid);
        notes.push({
          target: variant.name,
          round,
          'server processes': serverAfter.size,
          'server CPU %': percentOfCore(cpuSecondsBetween(cpu.server, serverAfter), wall),
          'PostgreSQL CPU %': percentOfCore(cpuSecondsBetween(cpu.postgres, treeCpuTicks(postgresPid)), wall),
          'load generator CPU %': percentOfCore((self.user + self.system) / 1e6, wall),
          ...(await hooks.after?.(server, run)),
        });
        return run;
      } finally {
        running.delete(server);
        await server.stop();
        // Anything the broker warned about, start to shutdown (an export failing, a refresh refused...).
        const warnings =
          server
            .log?.()
            .split('\n')
            .filter((line) => /"level":(40|50|60|"warn"|"error"|"fatal")/.test(line)) ?? [];
        if (warnings.length > 0)
          console.log(
            `${variant.name}, round ${round}: ${warnings.length} broker warning/error lines, the first:\n${warnings.slice(0, 5).join('\n')}`,
          );
      }
    });
    console.log(
      `\n${title}: token exchange shape ${shape.name}, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, alternating${QUICK ? ' (BENCH_QUICK: smoke, not a result)' : ''}`,
    );
    console.table(table(rows, ['p50', 'p95', 'p99']));
    console.log(
      'CPU per run, % of one core over warm-up + run (server: its whole process tree; load generator: this process)',
    );
    console.table(notes);
    return rows;
  }

  const summary = (rows: readonly Row[], a: string, b: string, shape: Shape = SHAPE): Record<string, string> => {
    const x = averages(rows, a, shape.name);
    const y = averages(rows, b, shape.name);
    return {
      comparison: `${a} / ${b}`,
      'req/s': ratio({ value: x.rps, valid: x.valid }, { value: y.rps, valid: y.valid }),
      p99: ratio({ value: x.p99, valid: x.valid }, { value: y.p99, valid: y.valid }),
    };
  };

  /** Connects `principal` to the provider through the broker's real flow (session with access and refresh token). */
  async function connect(enduserUrl: string, principal: string): Promise<void> {
    const callbackPrefix = `${db.audience}/api/third-party/${registry.serviceId}/oauth2/callback`;
    const start = await new ApiClient(enduserUrl, principal).get(
      `/api/third-party/${registry.serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${db.audience}/done`)}`,
    );
    const callback = await completeAuthorization(start.headers.location as string, callbackPrefix, principal);
    const done = await http(callback, { headers: { 'x-remote-user': principal } });
    if (!String(done.headers.location).includes('success=true'))
      throw new Error(`connecting ${principal} failed: ${done.status} ${String(done.headers.location)}`);
  }

  beforeAll(async () => {
    release = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the operations benchmark needs PostgreSQL (initdb/pg_ctl)');
    issuer = await GatewayIssuer.start();
    sink = await OtlpSink.start();
    db = await createBenchDatabase(cluster);
    postgresPid = await postmasterPid(db.databaseUrl);
    const started = process.hrtime.bigint();

    // One broker sets the database up: registry, seeded grants and sessions, then 10 % of
    // the users connected to oidc-provider for real (their sessions hold refresh tokens).
    const setup = await broker('setup').start();
    running.add(setup);
    try {
      registry = await createRegistry(setup.adminUrl as string, SMALL);
      const cipher = new EnvelopeCipher(testConfig({ encryption: { keys: [db.kek], current_key_id: db.kek.id } }));
      console.log(`${SMALL.label}: ${await seed(db.databaseUrl, SMALL, registry, cipher)}`);
      provider = await startThirdPartyProvider({
        redirectUris: [`${db.audience}/api/third-party/${registry.serviceId}/oauth2/callback`],
        scopes: ['read'],
      });
      await adminApi(setup.adminUrl as string).put(`/api/services/${registry.serviceId}`, {
        display_name: 'Bench API',
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
        issuer_uri: provider.issuer,
        protected_resources: [EXCHANGE_RESOURCE],
      });
      const users = benchUsers(SMALL);
      expiring = users.filter((_, i) => i % Math.round(1 / EXPIRING_SHARE) === 0);
      for (const principal of expiring) await connect(setup.enduserUrl as string, principal);
      const agentId = registry.agentIds[0] as string;
      const assertion = issuer.clientAssertion(db.audience);
      reused = users.map((user) =>
        exchangeBody(assertion, (issuer as GatewayIssuer).subjectToken(user, agentId, db.audience)),
      );
      fresh = new FreshBodies((n) =>
        exchangeBody(
          (issuer as GatewayIssuer).clientAssertion(db.audience),
          (issuer as GatewayIssuer).subjectToken(users[n % USERS] as string, agentId, db.audience),
        ),
      );
    } finally {
      running.delete(setup);
      await setup.stop();
    }
    console.log(
      `${expiring.length} sessions connected to oidc-provider through the broker; set-up ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`,
    );
    console.log(
      `machine: node ${process.version}, os.cpus().length = ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}; load: autocannon in a worker thread of this process, ${CONNECTIONS} connections`,
    );
  }, 900_000);

  afterAll(async () => {
    await Promise.all([...running].map((server) => server.stop()));
    console.log(`\n${fresh?.summary() ?? ''}`);
    await sink?.stop();
    await provider?.stop();
    await issuer?.stop();
    cluster?.stop();
    release?.();
  });

  it('1. metrics enabled vs disabled (target >= 0.97x)', async () => {
    // Twice the rounds: one run's req/s varies by up to ±8 % on this shared 2-core machine, more than the 3 % asked about.
    const rows = await compare(
      '1. Prometheus metrics',
      [broker('metrics on'), broker('metrics off', { telemetry: { metrics: { enabled: false } } })],
      {},
      2 * ROUNDS,
    );
    console.table([summary(rows, 'metrics on', 'metrics off')]);
  }, 1_800_000);

  it('1b. what metrics add to one token exchange, in microseconds (no network, no noise)', () => {
    // The calls a token exchange makes when metrics are on (hot route histogram, token outcome and exchange duration,
    // verified-JWT cache twice, client cache once, the two clock reads), timed in a loop on a registry of their own.
    const metrics = new BrokerMetrics(true);
    const requests = metrics.httpServer('enduser');
    const perRequest = (): void => {
      const started = performance.now();
      metrics.cacheLookup('client', true);
      metrics.cacheLookup('verified_jwt', false);
      metrics.cacheLookup('verified_jwt', false);
      const seconds = (performance.now() - started) / 1000;
      metrics.tokenRequest('urn:ietf:params:oauth:grant-type:token-exchange', 'ok', seconds);
      requests.observe('POST', '/oauth2/token', 200, seconds);
    };
    const N = 1_000_000;
    for (let i = 0; i < N / 10; i += 1) perRequest();
    const started = process.hrtime.bigint();
    for (let i = 0; i < N; i += 1) perRequest();
    const microseconds = Number(process.hrtime.bigint() - started) / 1e3 / N;
    console.log(
      `metrics per token exchange: ${microseconds.toFixed(3)} µs (${N.toLocaleString('en-US')} iterations); at 2,400 exchanges/s on ~1.25 cores a request costs ~520 µs of CPU, so this is ${((microseconds / 520) * 100).toFixed(2)} % of it`,
    );
  });

  it('2. tracing at ratio 1.0 to a loopback OTLP sink vs tracing off', async () => {
    const tracing = {
      telemetry: { tracing: { enabled: true, endpoint: (sink as OtlpSink).endpoint, sampling_ratio: 1 } },
    };
    const s = sink as OtlpSink;
    const rows = await compare('2. OpenTelemetry tracing', [broker('tracing on', tracing), broker('tracing off')], {
      // What reached the sink during warm-up and run (a stopping broker's last flush is dropped here).
      before: () => {
        s.requests = 0;
        s.bytes = 0;
        s.spans = 0;
        return Promise.resolve();
      },
      after: (_server, run) =>
        Promise.resolve({
          'OTLP exports': s.requests,
          'export MB': (s.bytes / 1e6).toFixed(1),
          spans: s.spans,
          'spans per 2xx (approx.)': (s.spans / (run.requests - run.non2xx)).toFixed(2),
        }),
    });
    console.table([summary(rows, 'tracing on', 'tracing off')]);
  }, 1_800_000);

  it('3. server.workers 2 vs 1 (target >= 1.6x) and vs the reference with 2 cluster workers (target >= 0.85x)', async () => {
    const rows = await compare('3. worker processes', [
      broker('broker, 2 workers', { server: { workers: 2 } }),
      broker('broker, 1 worker', { server: { workers: 1 } }),
      reference(2),
      reference(1),
    ]);
    console.table([
      summary(rows, 'broker, 2 workers', 'broker, 1 worker'),
      summary(rows, 'broker, 2 workers', 'reference, 2 workers'),
      summary(rows, 'reference, 2 workers', 'reference, 1 worker'),
    ]);
  }, 1_800_000);

  it('3b. the same with reused tokens (no signature work: where one event loop is the limit)', async () => {
    const variants = [
      broker('broker, 2 workers', { server: { workers: 2 } }),
      broker('broker, 1 worker', { server: { workers: 1 } }),
      reference(2),
      reference(1),
    ];
    const rows = await compare('3b. worker processes', variants, {}, ROUNDS, REUSED);
    console.table([
      summary(rows, 'broker, 2 workers', 'broker, 1 worker', REUSED),
      summary(rows, 'broker, 2 workers', 'reference, 2 workers', REUSED),
      summary(rows, 'reference, 2 workers', 'reference, 1 worker', REUSED),
    ]);
  }, 1_800_000);

  it('4. exchange p99 with proactive refresh on vs off while 10 % of the sessions expire', async () => {
    const p = provider as ThirdPartyProvider;
    const pg = new Client({ connectionString: db.databaseUrl });
    await pg.connect();
    try {
      const { rows: columns } = await pg.query(
        `SELECT 1 FROM information_schema.columns WHERE table_name = 'third_party_sessions' AND column_name = 'refresh_claimed_until'`,
      );
      const marked = async (): Promise<string[]> =>
        (
          await pg.query<{ principal: string }>(
            'SELECT principal FROM third_party_sessions WHERE service_id = $1 AND needs_reauthentication',
            [registry.serviceId],
          )
        ).rows.map((r) => r.principal);
      let before = { refreshes: 0, refusals: 0 };
      const rows = await compare(
        '4. proactive refresh',
        [
          broker('sweep on', { token_refresh: { proactive: SWEEP } }),
          broker('sweep off', { token_refresh: { proactive: { enabled: false } } }),
        ],
        {
          // A session a previous run left needing re-authentication is reconnected (and counted
          // in that run's notes). Then each expiring session's access token, issued an hour ago,
          // enters the exchange's refresh margin at an even spread over the measured seconds
          // (the warm-up excluded); any sweep lease is cleared.
          before: async (server) => {
            for (const principal of await marked()) await connect(server.enduserUrl as string, principal);
            const offsets = expiring.map(
              (_, i) => REFRESH_MARGIN_MS / 1000 + WARMUP_SECONDS + (DURATION_SECONDS * (i + 0.5)) / expiring.length,
            );
            const updated = await pg.query(
              `UPDATE third_party_sessions s SET access_token_expires_at = now() + make_interval(secs => x.offset_seconds), updated_at = now() - interval '1 hour'${columns.length > 0 ? ', refresh_claimed_until = NULL' : ''}
               FROM unnest($1::text[], $2::float8[]) AS x(principal, offset_seconds)
              WHERE s.principal = x.principal AND s.service_id = $3 AND s.needs_reauthentication = false`,
              [expiring, offsets, registry.serviceId],
            );
            if (updated.rowCount !== expiring.length)
              throw new Error(`${updated.rowCount} of ${expiring.length} expiring sessions are usable`);
            before = { refreshes: p.refreshes(), refusals: p.refusedRefreshes() };
          },
          after: async (server) => {
            return {
              'provider refreshes': p.refreshes() - before.refreshes,
              'provider refusals': p.refusedRefreshes() - before.refusals,
              'left needing re-authentication': (await marked()).length,
              'broker_vault_refreshes_total (trigger/outcome)':
                server.adminUrl === undefined ? '' : await refreshesByTrigger(server.adminUrl),
            };
          },
        },
      );
      console.table([summary(rows, 'sweep on', 'sweep off')]);
      console.log(
        `sweep on: token_refresh.proactive ${JSON.stringify(SWEEP)}; ${expiring.length} of ${USERS} users' access tokens reach the exchange's ${REFRESH_MARGIN_MS / 1000} s refresh margin during each run's ${DURATION_SECONDS} measured seconds`,
      );
    } finally {
      await pg.end();
    }
  }, 1_800_000);
});
