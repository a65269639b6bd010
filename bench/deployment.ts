import { createPostgresDatabase, freePort, testKey, type PostgresCluster } from '@broker/testing';
import { bindings, type EnvelopeCipher } from '@broker/vault';
import { Client } from 'pg';
import type { GatewayIssuer } from './gateway-issuer';
import {
  DURATION_SECONDS,
  EXCHANGE_FORM,
  EXCHANGE_RESOURCE,
  FORM_HEADERS,
  FRESH_RATE_CEILING,
  WARMUP_SECONDS,
  type Measurement,
} from './load';
import { startBroker, type BrokerLaunch, type BrokerServer } from './servers';

/**
 * What the PostgreSQL token-exchange benchmarks share (token-exchange.measure.ts,
 * operations.measure.ts): a throwaway database, the broker configuration pointing
 * at it, the registry created through the admin API, grants and sealed sessions seeded
 * straight into the database, and the pools of request bodies.
 */

/** The users whose tokens load the token exchange (they hold grants and sessions in every dataset). */
export const USERS = 1_000;

export const seconds = (since: bigint): string => (Number(process.hrtime.bigint() - since) / 1e9).toFixed(1);
export const count = (n: number): string => n.toLocaleString('en-US');

export interface Dataset {
  readonly label: string;
  /** Every principal has one sealed session with the bench service... */
  readonly principals: number;
  /** ...and a grant to each of this many agents (grants = principals x agents). */
  readonly agents: number;
}
export const SMALL: Dataset = { label: '1k grants, 1k sessions', principals: 1_000, agents: 1 };

/** The principals whose tokens load the broker, spread evenly over the dataset's users. */
export function benchUsers(dataset: Dataset): string[] {
  const stride = Math.floor(dataset.principals / USERS);
  return Array.from({ length: USERS }, (_, i) => `user-${1 + i * stride}`);
}

/** A token-exchange request body: the constant form, a client assertion and a subject token. */
export const exchangeBody = (assertion: string, subject: string): string =>
  `${EXCHANGE_FORM}&client_assertion=${assertion}&subject_token=${subject}`;

/**
 * Shape (a)'s pool of request bodies, each with a client assertion and a subject token
 * signed for it alone. A body handed out to a run (warm-up included) is dropped, whether
 * or not it was answered, so no token ever reaches a server twice: the broker caches
 * verified JWTs by their hash, and a reused token would measure that cache instead.
 */
export class FreshBodies {
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

/** Fails unless `url` answers 200 (a GET, or a form POST of `body`). */
export async function expectOk(url: string, body?: string): Promise<void> {
  const response = await fetch(url, body === undefined ? {} : { method: 'POST', headers: FORM_HEADERS, body });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
}

/** JSON calls to the admin API as the bench's administrator. */
export function adminApi(adminUrl: string): {
  post<T>(path: string, body: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
} {
  const send = async <T>(method: string, path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${adminUrl}${path}`, {
      method,
      headers: { 'x-remote-user': 'bench-admin', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  return {
    post: <T>(path: string, body: unknown) => send<T>('POST', path, body),
    put: <T>(path: string, body: unknown) => send<T>('PUT', path, body),
  };
}

/** A throwaway database and the fixed identity of every broker started on it. */
export interface BenchDatabase {
  readonly databaseUrl: string;
  readonly kek: { readonly id: string; readonly key: string };
  readonly jweKey: { readonly id: string; readonly key: string };
  /** The end-user port of every broker on this database (one at a time, or one after another). */
  readonly port: number;
  /** The broker's issuer: the audience of the gateway's client assertions and of users' subject tokens. */
  readonly audience: string;
}

export async function createBenchDatabase(cluster: PostgresCluster): Promise<BenchDatabase> {
  const port = await freePort();
  return {
    databaseUrl: await createPostgresDatabase(cluster.url),
    kek: { id: 'bench-kek', key: testKey() },
    jweKey: { id: 'bench-jwe', key: testKey() },
    port,
    audience: `http://127.0.0.1:${port}`,
  };
}

/** Configuration sections a benchmark sets on top of the fixed ones (server: merged; the others replace). */
export type BrokerOverrides = Record<string, unknown> & { readonly server?: Record<string, unknown> };

/**
 * Starts the compiled broker on `db` (pool of 10 per process, production logging: one JSON
 * line per request), trusting `issuer` for client assertions, with `overrides` on top.
 */
export function startBenchBroker(
  db: BenchDatabase,
  issuer: GatewayIssuer,
  overrides: BrokerOverrides = {},
  launch: BrokerLaunch = {},
): Promise<BrokerServer> {
  const { server, ...rest } = overrides;
  return startBroker(
    {
      storage: { backend: 'postgres', postgres: { connection_url: db.databaseUrl, pool_size: 10 } },
      encryption: { keys: [db.kek], current_key_id: db.kek.id },
      third_party_oauth2: { jwe_keys: [db.jweKey] },
      token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
      log: { level: 'info' },
      ...rest,
      server: { ...server, enduser: { port: db.port, public_url: db.audience } },
    },
    launch,
  );
}

export interface Registry {
  readonly serviceId: string;
  readonly permissionSetId: string;
  readonly agentIds: readonly string[];
}

/** The bench service (protecting EXCHANGE_RESOURCE, scope read), a permission set, and the dataset's agents. */
export async function createRegistry(adminUrl: string, dataset: Dataset): Promise<Registry> {
  const admin = adminApi(adminUrl);
  const service = await admin.post<{ id: string }>('/api/services', {
    display_name: 'Bench API',
    client_id: 'c',
    issuer_uri: 'https://idp.example.com',
    authorization_endpoint: 'https://idp.example.com/a',
    token_endpoint: 'https://idp.example.com/t',
    protected_resources: [EXCHANGE_RESOURCE],
  });
  const set = await admin.post<{ id: string }>('/api/permission-sets', {
    name: 'Bench',
    service_scopes: [{ service_id: service.id, scopes: ['read'] }],
  });
  const agentIds: string[] = [];
  for (let i = 0; i < dataset.agents; i += 1)
    agentIds.push(
      (
        await admin.post<{ id: string }>('/api/agents', {
          display_name: `Bench Agent ${i}`,
          permission_sets: [{ permission_set_id: set.id }],
        })
      ).id,
    );
  return { serviceId: service.id, permissionSetId: set.id, agentIds };
}

/**
 * Seeds grants, delegations and sessions straight into the database: grants and
 * delegations generated by PostgreSQL itself, sessions sealed by the real EnvelopeCipher
 * (each envelope is bound to its service and principal, so each is sealed on its own)
 * and inserted 5,000 rows per statement. Returns the printable timings.
 */
export async function seed(
  databaseUrl: string,
  dataset: Dataset,
  ids: { agentIds: readonly string[]; serviceId: string; permissionSetId: string },
  cipher: EnvelopeCipher,
): Promise<string> {
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
    await step('delegations', () =>
      db.query(
        `INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) SELECT id, $1, $2, '["read"]', 0 FROM grants`,
        [ids.permissionSetId, ids.serviceId],
      ),
    );
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
          envelopes.push(
            cipher.encrypt(
              `third-party-token-of-${principal}`,
              bindings.sessionToken(ids.serviceId, principal, 'access_token'),
            ),
          );
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
