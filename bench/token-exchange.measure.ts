import { cpus } from 'node:os';
import { createPostgresDatabase, freePort, startPostgresCluster, testConfig, testKey, type PostgresCluster } from '@broker/testing';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { GatewayIssuer } from './gateway-issuer';
import { alternate, averages, DURATION_SECONDS, EXCHANGE_FORM, EXCHANGE_RESOURCE, FORM_HEADERS, FRESH_RATE_CEILING, measureLoad, ratio, table, WARMUP_SECONDS, type Measurement, type Row } from './load';
import { takeMachine } from './machine-lock';
import { startBroker, startScriptServer, type BrokerServer, type ServerProcess } from './servers';

/**
 * The token-exchange benchmark of issue 7, on a throwaway PostgreSQL cluster.
 *
 * For each dataset (1k grants; then 1M grants and 200k sessions in a second database) the
 * broker (one process, production logging) and bench/reference-server.mjs (plain node:http
 * doing the same work) are loaded with autocannon, alternating A B A B, in two shapes:
 * (a) every request carries a client assertion and a subject token never sent before, to
 * any server; (b) one gateway assertion and 1,000 users' subject tokens, reused. Then, on
 * the same PostgreSQL broker, client_credentials next to oidc-provider, and the JWKS.
 * Prints numbers; asserts nothing about them.
 *
 * To add a scenario: a shape for the token exchange goes into SHAPES; anything else is a
 * measureLoad() per run, alternate() for A B A B against a reference, table() to print.
 */
const CONNECTIONS = 50;
const ROUNDS = 2;
/** The users whose tokens load the token exchange (they hold grants and sessions in every dataset). */
const USERS = 1_000;

const seconds = (since: bigint): string => (Number(process.hrtime.bigint() - since) / 1e9).toFixed(1);
const count = (n: number): string => n.toLocaleString('en-US');

interface Dataset {
  readonly label: string;
  /** Every principal has one sealed session with the bench service... */
  readonly principals: number;
  /** ...and a grant to each of this many agents (grants = principals x agents). */
  readonly agents: number;
}
const SMALL: Dataset = { label: '1k grants, 1k sessions', principals: 1_000, agents: 1 };
/** 200k users who each delegated to 5 agents: 1M grants (and delegations), 200k sessions. */
const LARGE: Dataset = { label: '1M grants, 200k sessions', principals: 200_000, agents: 5 };

/** One dataset's database with a broker and a reference pointing at it. */
interface Deployment {
  readonly dataset: Dataset;
  readonly broker: BrokerServer;
  readonly reference: ServerProcess & { readonly url: string };
  /** The agent the bench users' subject tokens name (the first of the dataset's agents). */
  readonly agentId: string;
  /** Shape (b): one assertion and the USERS subject tokens, reused run after run. */
  readonly reusedBodies: readonly string[];
  readonly fresh: FreshBodies;
  adminPost<T>(path: string, body: unknown): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Shape (a)'s pool of request bodies, each with a client assertion and a subject token
 * signed for it alone. A body handed out to a run (warm-up included) is dropped, whether
 * or not it was answered, so no token ever reaches a server twice: the broker is to cache
 * verified JWTs by their hash, and a reused token would measure that cache instead.
 */
class FreshBodies {
  private bodies: string[] = [];
  private fastestRps = 0;
  private signed = 0;
  private signingNs = 0n;

  constructor(private readonly make: (n: number) => string) {}

  /** Signs what is missing for the next run (outside the measurement) and returns the pool. */
  ready(): readonly string[] {
    const started = process.hrtime.bigint();
    const wanted = Math.ceil(Math.max(FRESH_RATE_CEILING, 1.5 * this.fastestRps) * (WARMUP_SECONDS + DURATION_SECONDS));
    for (; this.bodies.length < wanted; this.signed += 1) this.bodies.push(this.make(this.signed));
    this.signingNs += process.hrtime.bigint() - started;
    return this.bodies;
  }

  summary(): string {
    return `${count(this.signed)} fresh token pairs signed (${(Number(this.signingNs) / 1e9).toFixed(1)} s, between runs), ${count(this.bodies.length)} left unsent`;
  }

  spend(run: Measurement): void {
    this.bodies = this.bodies.slice(run.spent);
    this.fastestRps = Math.max(this.fastestRps, run.rps);
  }
}

interface Target {
  readonly name: string;
  readonly url: string;
}

/** The token-exchange load shapes; each run of a shape gets its bodies from `bodies` and reports back. */
interface TokenExchangeShape {
  readonly name: string;
  bodies(deployment: Deployment): { bodies: readonly string[]; cycle: boolean };
  spent?(deployment: Deployment, run: Measurement): void;
}
const SHAPES: readonly TokenExchangeShape[] = [
  { name: '(a) fresh tokens', bodies: (d) => ({ bodies: d.fresh.ready(), cycle: false }), spent: (d, run) => d.fresh.spend(run) },
  { name: '(b) reused tokens', bodies: (d) => ({ bodies: d.reusedBodies, cycle: true }) },
];

/** The principals whose tokens load the broker, spread evenly over the dataset's users. */
function benchUsers(dataset: Dataset): string[] {
  const stride = Math.floor(dataset.principals / USERS);
  return Array.from({ length: USERS }, (_, i) => `user-${1 + i * stride}`);
}

/**
 * Seeds grants, delegations and sessions straight into the database: grants and
 * delegations generated by PostgreSQL itself, sessions sealed by the real EnvelopeCipher
 * (each envelope is bound to its service and principal, so each is sealed on its own)
 * and inserted 5,000 rows per statement. Returns the printable timings.
 */
async function seed(databaseUrl: string, dataset: Dataset, ids: { agentIds: readonly string[]; serviceId: string; permissionSetId: string }, cipher: EnvelopeCipher): Promise<string> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const steps: string[] = [];
  const step = async (name: string, work: () => Promise<unknown>): Promise<void> => {
    const started = process.hrtime.bigint();
    await work();
    steps.push(`${name} ${seconds(started)} s`);
  };
  const started = process.hrtime.bigint();
  try {
    // The rows are consistent by construction; skipping the per-row foreign-key triggers
    // (a superuser setting, on a throwaway cluster) saves most of the insert time.
    await db.query('SET session_replication_role = replica');
    await step('grants', () =>
      db.query(
        `INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at)
         SELECT gen_random_uuid(), 'user-' || p, a.id, NULL, now(), now()
           FROM generate_series(1, $1::int) AS p CROSS JOIN unnest($2::uuid[]) AS a(id)`,
        [dataset.principals, ids.agentIds],
      ),
    );
    await step('delegations', () => db.query(`INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) SELECT id, $1, $2, '["read"]', 0 FROM grants`, [ids.permissionSetId, ids.serviceId]));
    await step('sealed sessions', async () => {
      const BATCH = 5_000;
      // PostgreSQL inserts one batch while the next one is sealed here.
      let inserting: Promise<unknown> = Promise.resolve();
      for (let first = 1; first <= dataset.principals; first += BATCH) {
        const principals: string[] = [];
        const envelopes: Buffer[] = [];
        for (let p = first; p < first + BATCH && p <= dataset.principals; p += 1) {
          const principal = `user-${p}`;
          principals.push(principal);
          envelopes.push(cipher.encrypt(`third-party-token-of-${principal}`, bindings.sessionToken(ids.serviceId, principal, 'access_token')));
        }
        await inserting;
        inserting = db.query(
          `INSERT INTO third_party_sessions (id, principal, service_id, access_token_envelope, refresh_token_envelope, token_type, scopes, access_token_expires_at, refresh_token_expires_at, initiated_at, updated_at)
           SELECT gen_random_uuid(), s.principal, $1, s.envelope, NULL, 'Bearer', '["read"]', now() + interval '1 day', NULL, now(), now()
             FROM unnest($2::text[], $3::bytea[]) AS s(principal, envelope)`,
          [ids.serviceId, principals, envelopes],
        );
      }
      await inserting;
    });
    await db.query('SET session_replication_role = DEFAULT');
    // Statistics for the planner, and a vacuum and checkpoint now rather than autovacuum
    // (which a million fresh rows would trigger) or a checkpoint in the middle of a run.
    await step('VACUUM ANALYZE + CHECKPOINT', async () => {
      await db.query('VACUUM ANALYZE');
      await db.query('CHECKPOINT');
    });
  } finally {
    await db.end();
  }
  return `seeded ${count(dataset.principals * dataset.agents)} grants (+ as many delegations) and ${count(dataset.principals)} sealed sessions in ${seconds(started)} s (${steps.join(', ')})`;
}

async function expectOk(url: string, body?: string): Promise<void> {
  const response = await fetch(url, body === undefined ? {} : { method: 'POST', headers: FORM_HEADERS, body });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
}

/** A database for `dataset`, registry through the admin API, data seeded, broker and reference started. */
async function deploy(cluster: PostgresCluster, issuer: GatewayIssuer, dataset: Dataset): Promise<Deployment> {
  const databaseUrl = await createPostgresDatabase(cluster.url);
  const kek = { id: 'bench-kek', key: testKey() };
  const port = await freePort();
  // The broker's issuer: the audience of the gateway's client assertions and of users' subject tokens.
  const audience = `http://127.0.0.1:${port}`;
  const broker = await startBroker({
    server: { enduser: { port, public_url: audience } },
    storage: { backend: 'postgres', postgres: { connection_url: databaseUrl, pool_size: 10 } },
    encryption: { keys: [kek], current_key_id: kek.id },
    third_party_oauth2: { jwe_keys: [{ id: 'bench-jwe', key: testKey() }] },
    token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
    // Measured with production logging: one JSON line per request.
    log: { level: 'info' },
  });
  let reference: (ServerProcess & { url: string }) | undefined;
  try {
    const adminPost = async <T>(path: string, body: unknown): Promise<T> => {
      const response = await fetch(`${broker.adminUrl}${path}`, { method: 'POST', headers: { 'x-remote-user': 'bench-admin', 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    };
    const service = await adminPost<{ id: string }>('/api/services', { display_name: 'Bench API', client_id: 'c', issuer_uri: 'https://idp.example.com', authorization_endpoint: 'https://idp.example.com/a', token_endpoint: 'https://idp.example.com/t', protected_resources: [EXCHANGE_RESOURCE] });
    const set = await adminPost<{ id: string }>('/api/permission-sets', { name: 'Bench', service_scopes: [{ service_id: service.id, scopes: ['read'] }] });
    const agentIds: string[] = [];
    for (let i = 0; i < dataset.agents; i += 1) agentIds.push((await adminPost<{ id: string }>('/api/agents', { display_name: `Bench Agent ${i}`, permission_sets: [{ permission_set_id: set.id }] })).id);
    const agentId = agentIds[0] as string;

    const cipher = new EnvelopeCipher(testConfig({ encryption: { keys: [kek], current_key_id: kek.id } }));
    console.log(`${dataset.label}: ${await seed(databaseUrl, dataset, { agentIds, serviceId: service.id, permissionSetId: set.id }, cipher)}`);

    reference = await startScriptServer('reference-server.mjs', [JSON.stringify({ jwk: issuer.publicJwk, issuer: issuer.issuer, audience, databaseUrl, kek })]);
    const users = benchUsers(dataset);
    const body = (assertion: string, subject: string): string => `${EXCHANGE_FORM}&client_assertion=${assertion}&subject_token=${subject}`;
    const assertion = issuer.clientAssertion(audience);
    const reusedBodies = users.map((user) => body(assertion, issuer.subjectToken(user, agentId, audience)));
    const fresh = new FreshBodies((n) => body(issuer.clientAssertion(audience), issuer.subjectToken(users[n % USERS] as string, agentId, audience)));
    // Both answer a token exchange before anything is measured (with tokens of their own,
    // so the fresh pool stays unsent).
    for (const url of [`${broker.enduserUrl}/oauth2/token`, `${reference.url}/token`]) {
      await expectOk(url, body(issuer.clientAssertion(audience), issuer.subjectToken(users[USERS - 1] as string, agentId, audience)));
    }
    const { stop: stopReference } = reference;
    const stop = async (): Promise<void> => {
      await Promise.all([broker.stop(), stopReference()]);
    };
    return { dataset, broker, reference, agentId, reusedBodies, fresh, adminPost, stop };
  } catch (error) {
    await Promise.all([broker.stop(), reference?.stop()]);
    throw error;
  }
}

/** Shapes (a) and (b), broker and reference alternating, ROUNDS rounds. */
function tokenExchange(deployment: Deployment): Promise<Row[]> {
  const targets: Target[] = [
    { name: 'broker', url: `${deployment.broker.enduserUrl}/oauth2/token` },
    { name: 'reference', url: `${deployment.reference.url}/token` },
  ];
  return alternate(ROUNDS, SHAPES, targets, async (shape, target) => {
    const { bodies, cycle } = shape.bodies(deployment);
    const run = await measureLoad({ url: target.url, method: 'POST', headers: FORM_HEADERS, bodies, cycle, connections: CONNECTIONS });
    shape.spent?.(deployment, run);
    return run;
  });
}

function printTokenExchange(deployment: Deployment, rows: readonly Row[]): void {
  console.log(`\n${deployment.dataset.label}: token exchange, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, broker and reference alternating`);
  console.table(table(rows));
  console.log(`peak RSS (VmHWM): broker ${deployment.broker.peakRssMb()} MB, reference ${deployment.reference.peakRssMb()} MB; shape (a): ${deployment.fresh.summary()}`);
  console.table(
    SHAPES.map(({ name }) => {
      const broker = averages(rows, 'broker', name);
      const reference = averages(rows, 'reference', name);
      return {
        shape: name,
        'req/s broker/reference': ratio({ value: broker.rps, valid: broker.valid }, { value: reference.rps, valid: reference.valid }),
        'p99 broker/reference': ratio({ value: broker.p99, valid: broker.valid }, { value: reference.p99, valid: reference.valid }),
      };
    }),
  );
}

/** client_credentials on the broker next to oidc-provider configured for the same grant, alternating. */
async function clientCredentials(deployment: Deployment): Promise<void> {
  const { client_secret: secret } = await deployment.adminPost<{ client_secret: string }>(`/api/agents/${deployment.agentId}/client-credentials`, {});
  const form = (clientId: string, clientSecret: string): string => new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read' }).toString();
  const provider = await startScriptServer('oidc-provider-server.mjs', [], { quiet: true });
  try {
    const targets = [
      { name: 'broker', url: `${deployment.broker.enduserUrl}/oauth2/token`, body: form(deployment.agentId, secret) },
      { name: 'oidc-provider', url: `${provider.url}/token`, body: form('bench', 'bench-secret-0123456789') },
    ];
    for (const target of targets) await expectOk(target.url, target.body);
    const rows = await alternate(ROUNDS, [{ name: 'client_credentials' }], targets, (_shape, target) => measureLoad({ url: target.url, method: 'POST', headers: FORM_HEADERS, bodies: [target.body], connections: CONNECTIONS }));
    console.log(`\nclient_credentials (POST /oauth2/token), broker on PostgreSQL vs oidc-provider, ${CONNECTIONS} connections`);
    console.table(table(rows));
    const broker = averages(rows, 'broker', 'client_credentials');
    const reference = averages(rows, 'oidc-provider', 'client_credentials');
    console.log(`broker/oidc-provider: req/s ${ratio({ value: broker.rps, valid: broker.valid }, { value: reference.rps, valid: reference.valid })}, p99 ${ratio({ value: broker.p99, valid: broker.valid }, { value: reference.p99, valid: reference.valid })}`);
  } finally {
    await provider.stop();
  }
}

/** GET /oauth2/jwks.json with one key per algorithm (the boot ES256 key, plus ES256, EdDSA, RS256). */
async function jwks(deployment: Deployment): Promise<void> {
  // Added after client_credentials: the newest key may become the signing key.
  for (const algorithm of ['ES256', 'EdDSA', 'RS256']) await deployment.adminPost('/api/oauth2-server/signing-keys', { algorithm });
  const url = `${deployment.broker.enduserUrl}/oauth2/jwks.json`;
  await expectOk(url);
  const run = await measureLoad({ url, connections: CONNECTIONS });
  console.log(`\nGET /oauth2/jwks.json (4 keys), ${CONNECTIONS} connections`);
  console.table(table([{ target: 'broker', shape: 'GET /oauth2/jwks.json', round: 1, measurement: run }]));
}

describe('token exchange benchmark (PostgreSQL)', () => {
  let releaseMachine: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  const deployments = new Set<Deployment>();
  let smallRows: Row[] = [];

  // Each dataset's processes run only during its own test; afterAll stops what a failure left.
  const up = async (dataset: Dataset): Promise<Deployment> => {
    const deployment = await deploy(cluster as PostgresCluster, issuer as GatewayIssuer, dataset);
    deployments.add(deployment);
    return deployment;
  };
  const down = async (deployment: Deployment): Promise<void> => {
    deployments.delete(deployment);
    await deployment.stop();
  };

  beforeAll(async () => {
    releaseMachine = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the token-exchange benchmark needs PostgreSQL (initdb/pg_ctl)');
    issuer = await GatewayIssuer.start();
    console.log(`machine: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}; load: autocannon, ${CONNECTIONS} connections`);
  }, 900_000);

  afterAll(async () => {
    await Promise.all([...deployments].map((d) => d.stop()));
    await issuer?.stop();
    cluster?.stop();
    releaseMachine?.();
  });

  it(`${SMALL.label}: token exchange broker vs reference; client_credentials vs oidc-provider; JWKS`, async () => {
    const deployment = await up(SMALL);
    smallRows = await tokenExchange(deployment);
    // Read before the other scenarios: the peak RSS is the token exchange's.
    printTokenExchange(deployment, smallRows);
    await clientCredentials(deployment);
    await jwks(deployment);
    await down(deployment);
  }, 900_000);

  it(`${LARGE.label}: token exchange broker vs reference`, async () => {
    const deployment = await up(LARGE);
    const rows = await tokenExchange(deployment);
    printTokenExchange(deployment, rows);
    await down(deployment);
    console.log(`\np99 ${LARGE.label} / ${SMALL.label}`);
    console.table(
      SHAPES.flatMap(({ name }) =>
        ['broker', 'reference'].map((target) => {
          const large = averages(rows, target, name);
          const small = averages(smallRows, target, name);
          return { target, shape: name, 'p99 ratio': ratio({ value: large.p99, valid: large.valid }, { value: small.p99, valid: small.valid }) };
        }),
      ),
    );
  }, 900_000);
});
