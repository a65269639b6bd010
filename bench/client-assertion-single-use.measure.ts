import { cpus } from 'node:os';
import {
  createPostgresDatabase,
  freePort,
  startPostgresCluster,
  testConfig,
  testKey,
  type PostgresCluster,
} from '@broker/testing';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { GatewayIssuer } from './gateway-issuer';
import {
  alternate,
  averages,
  DURATION_SECONDS,
  EXCHANGE_FORM,
  EXCHANGE_RESOURCE,
  FORM_HEADERS,
  FRESH_RATE_CEILING,
  measureLoad,
  ratio,
  table,
  WARMUP_SECONDS,
  type Row,
} from './load';
import { takeMachine } from './machine-lock';
import { startBroker, type BrokerServer } from './servers';

/**
 * The token exchange with `token_exchange.client_assertion.single_use` off (the default)
 * and on (a `jti` accepted once, recorded in the database), on one
 * PostgreSQL database served by two broker processes that differ only in that key.
 * Shape (a) sends a client assertion and a subject token never sent before, to either
 * broker, so both do the same verification work and the difference is the replay record's
 * one statement; shape (b), reused tokens, runs on the default broker only (a single-use
 * assertion cannot be reused), as the default hot path's reference. Prints numbers;
 * asserts nothing.
 */
const CONNECTIONS = 50;
const ROUNDS = 2;
const USERS = 100;

interface Target {
  readonly name: string;
  readonly url: string;
}

/** Grants, delegations and sealed sessions of `principals` for one agent and service, straight into the database. */
async function seed(
  databaseUrl: string,
  principals: readonly string[],
  ids: { agentId: string; serviceId: string; permissionSetId: string },
  cipher: EnvelopeCipher,
): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) SELECT gen_random_uuid(), p, $2, NULL, now(), now() FROM unnest($1::text[]) AS p`,
      [principals, ids.agentId],
    );
    await db.query(
      `INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) SELECT id, $1, $2, '["read"]', 0 FROM grants`,
      [ids.permissionSetId, ids.serviceId],
    );
    const envelopes = principals.map((principal) =>
      cipher.encrypt(
        `third-party-token-of-${principal}`,
        bindings.sessionToken(ids.serviceId, principal, 'access_token'),
      ),
    );
    await db.query(
      `INSERT INTO third_party_sessions (id, principal, service_id, access_token_envelope, refresh_token_envelope, token_type, scopes, access_token_expires_at, refresh_token_expires_at, initiated_at, updated_at)
       SELECT gen_random_uuid(), s.principal, $1, s.envelope, NULL, 'Bearer', '["read"]', now() + interval '1 day', NULL, now(), now()
         FROM unnest($2::text[], $3::bytea[]) AS s(principal, envelope)`,
      [ids.serviceId, principals, envelopes],
    );
    await db.query('VACUUM ANALYZE');
  } finally {
    await db.end();
  }
}

async function expectStatus(url: string, body: string, status: number): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: FORM_HEADERS, body });
  if (response.status !== status) throw new Error(`${url}: ${response.status} ${await response.text()}`);
}

describe('token exchange: client_assertion.single_use off and on (PostgreSQL)', () => {
  let releaseMachine: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  const brokers: BrokerServer[] = [];

  beforeAll(async () => {
    releaseMachine = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('this benchmark needs PostgreSQL (initdb/pg_ctl)');
    issuer = await GatewayIssuer.start();
    console.log(
      `machine: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}; load: autocannon, ${CONNECTIONS} connections`,
    );
  }, 300_000);

  afterAll(async () => {
    await Promise.all(brokers.map((broker) => broker.stop()));
    await issuer?.stop();
    cluster?.stop();
    releaseMachine?.();
  });

  it('single_use off vs on: req/s and p99 of fresh-token exchanges', async () => {
    const gateway = issuer as GatewayIssuer;
    const databaseUrl = await createPostgresDatabase((cluster as PostgresCluster).url);
    const kek = { id: 'bench-kek', key: testKey() };
    const jwe = { id: 'bench-jwe', key: testKey() };
    // Both brokers are the same issuer (one public URL): the audience of every token.
    const audience = 'http://broker.bench.test';
    const start = async (singleUse: boolean): Promise<BrokerServer> => {
      const broker = await startBroker({
        server: { enduser: { port: await freePort(), public_url: audience } },
        storage: { backend: 'postgres', postgres: { connection_url: databaseUrl, pool_size: 10 } },
        encryption: { keys: [kek], current_key_id: kek.id },
        third_party_oauth2: { jwe_keys: [jwe] },
        token_exchange: {
          client_assertion: { issuer_uri: gateway.issuer, jwks_uri: gateway.jwksUri, single_use: singleUse },
        },
        log: { level: 'info' },
      });
      brokers.push(broker);
      return broker;
    };
    const off = await start(false);
    const on = await start(true);

    const adminPost = async <T>(path: string, body: unknown): Promise<T> => {
      const response = await fetch(`${off.adminUrl}${path}`, {
        method: 'POST',
        headers: { 'x-remote-user': 'bench-admin', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    };
    const service = await adminPost<{ id: string }>('/api/services', {
      display_name: 'Bench API',
      client_id: 'c',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: [EXCHANGE_RESOURCE],
    });
    const set = await adminPost<{ id: string }>('/api/permission-sets', {
      name: 'Bench',
      service_scopes: [{ service_id: service.id, scopes: ['read'] }],
    });
    const agentId = (
      await adminPost<{ id: string }>('/api/agents', {
        display_name: 'Bench Agent',
        permission_sets: [{ permission_set_id: set.id }],
      })
    ).id;
    const users = Array.from({ length: USERS }, (_, i) => `user-${i + 1}`);
    await seed(
      databaseUrl,
      users,
      { agentId, serviceId: service.id, permissionSetId: set.id },
      new EnvelopeCipher(testConfig({ encryption: { keys: [kek], current_key_id: kek.id } })),
    );

    const body = (assertion: string, subject: string): string =>
      `${EXCHANGE_FORM}&client_assertion=${assertion}&subject_token=${subject}`;
    const freshBody = (n: number): string =>
      body(gateway.clientAssertion(audience), gateway.subjectToken(users[n % USERS] as string, agentId, audience));
    const targets: Target[] = [
      { name: 'single_use off', url: `${off.enduserUrl}/oauth2/token` },
      { name: 'single_use on', url: `${on.enduserUrl}/oauth2/token` },
    ];
    // Both answer before anything is measured; the replay is refused only where single_use is on.
    const probe = freshBody(0);
    await expectStatus(targets[1]?.url as string, probe, 200);
    await expectStatus(targets[1]?.url as string, probe, 401);
    await expectStatus(targets[0]?.url as string, probe, 200);

    // Signed between runs, never during one; every body is sent at most once.
    let signed = 0;
    const fresh = (): string[] =>
      Array.from({ length: Math.ceil(FRESH_RATE_CEILING * (WARMUP_SECONDS + DURATION_SECONDS)) }, () =>
        freshBody((signed += 1)),
      );
    const rows: Row[] = await alternate(ROUNDS, [{ name: '(a) fresh tokens' }], targets, (_shape, target) =>
      measureLoad({
        url: target.url,
        method: 'POST',
        headers: FORM_HEADERS,
        bodies: fresh(),
        cycle: false,
        connections: CONNECTIONS,
      }),
    );
    const assertion = gateway.clientAssertion(audience);
    const reused = users.map((user) => body(assertion, gateway.subjectToken(user, agentId, audience)));
    for (let round = 1; round <= ROUNDS; round += 1) {
      rows.push({
        target: 'single_use off',
        shape: '(b) reused tokens',
        round,
        measurement: await measureLoad({
          url: targets[0]?.url as string,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies: reused,
          cycle: true,
          connections: CONNECTIONS,
        }),
      });
    }
    console.log(
      `\ntoken exchange, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, single_use off and on alternating; ${signed} fresh token pairs signed between runs`,
    );
    console.table(table(rows));
    const offRuns = averages(rows, 'single_use off', '(a) fresh tokens');
    const onRuns = averages(rows, 'single_use on', '(a) fresh tokens');
    console.log(
      `(a) single_use on/off: req/s ${ratio({ value: onRuns.rps, valid: onRuns.valid }, { value: offRuns.rps, valid: offRuns.valid })}, p99 ${ratio({ value: onRuns.p99, valid: onRuns.valid }, { value: offRuns.p99, valid: offRuns.valid })}`,
    );
    console.log(`peak RSS (VmHWM): off ${off.peakRssMb()} MB, on ${on.peakRssMb()} MB`);
  }, 900_000);
});
