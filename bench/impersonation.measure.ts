import { cpus } from 'node:os';
import { createPostgresDatabase, freePort, startPostgresCluster, testKey, type PostgresCluster } from '@broker/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { GatewayIssuer } from './gateway-issuer';
import { DURATION_SECONDS, measureLoad, table, WARMUP_SECONDS, type Row } from './load';
import { takeMachine } from './machine-lock';
import { startBroker, type BrokerServer } from './servers';

/**
 * Impersonation on POST /oauth2/token: p95 of successful impersonations at
 * concurrency 100 (the Go upstream's own target: p95 < 500 ms at 100 concurrent), on
 * PostgreSQL, one broker process with production logging. Shapes: (a) every request with
 * a never-sent client assertion, actor token and subject token; (b) one assertion and one
 * actor token, 1,000 users' subject tokens reused. Prints numbers; asserts nothing.
 */
const CONNECTIONS = 100;
const USERS = 1_000;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' } as const;
const ACTOR_AUDIENCE = 'https://ops.bench.example.com';
const SUBJECT_AUDIENCE = 'https://apps.bench.example.com';

describe('impersonation benchmark (PostgreSQL)', () => {
  let release: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  let broker: BrokerServer | undefined;

  beforeAll(async () => {
    release = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the impersonation benchmark needs PostgreSQL (initdb/pg_ctl)');
  }, 900_000);

  afterAll(async () => {
    await broker?.stop();
    await issuer?.stop();
    cluster?.stop();
    release?.();
  });

  it('p95 of successful impersonations at concurrency 100', async () => {
    issuer = await GatewayIssuer.start();
    const databaseUrl = await createPostgresDatabase((cluster as PostgresCluster).url);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const prefix = `${base}/impersonation`;
    const kek = { id: 'bench-kek', key: testKey() };
    broker = await startBroker({
      server: { enduser: { port, public_url: base } },
      storage: { backend: 'postgres', postgres: { connection_url: databaseUrl, pool_size: 10 } },
      encryption: { keys: [kek], current_key_id: kek.id },
      third_party_oauth2: { jwe_keys: [{ id: 'bench-jwe', key: testKey() }] },
      oauth2_authorization_server: {
        impersonation: {
          audience_prefix: prefix,
          rules: [
            {
              name: 'bench',
              roles: { actor: { expected_audience: ACTOR_AUDIENCE }, subject: { expected_audience: SUBJECT_AUDIENCE } },
              trusted_issuers: [
                {
                  issuer_uri: issuer.issuer,
                  jwks_uri: issuer.jwksUri,
                  allowed_algorithms: ['ES256'],
                  signs_roles: ['client_assertion', 'actor', 'subject'],
                },
              ],
              authorization: {
                cel: { expression: 'client_assertion.sub == "bench-gateway" && actor_token.sub.startsWith("ops-")' },
              },
            },
          ],
        },
      },
      log: { level: 'info' },
    });
    const admin = (path: string, body: unknown): Promise<{ id: string }> =>
      fetch(`${(broker as BrokerServer).adminUrl}${path}`, {
        method: 'POST',
        headers: { 'x-remote-user': 'bench', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ id: string }>);
    const service = await admin('/api/services', {
      display_name: 'Bench API',
      client_id: 'c',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: ['https://bench-api.example.com'],
    });
    const set = await admin('/api/permission-sets', {
      name: 'Bench',
      service_scopes: [{ service_id: service.id, scopes: ['read'] }],
    });
    const agent = (
      await admin('/api/agents', {
        display_name: 'Bench Agent',
        canonical_id: 'bench-agent',
        permission_sets: [{ permission_set_id: set.id }],
      })
    ).id;
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    await db.query(
      `INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) SELECT gen_random_uuid(), 'user-' || i, $1, NULL, now(), now() FROM generate_series(1, $2) AS i`,
      [agent, USERS],
    );
    await db.query(
      `INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) SELECT id, $1, $2, '["read"]', 0 FROM grants WHERE agent_id = $3`,
      [set.id, service.id, agent],
    );
    await db.query('ANALYZE');
    await db.end();

    const gateway = issuer;
    const body = (assertion: string, actor: string, subject: string): string =>
      new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        audience: `${prefix}/${agent}`,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
        actor_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        actor_token: actor,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        subject_token: subject,
      }).toString();
    const assertionFor = (): string => gateway.token({ sub: 'bench-gateway', aud: base });
    const actorFor = (): string => gateway.token({ sub: 'ops-bench', aud: ACTOR_AUDIENCE });
    const subjectFor = (user: number): string => gateway.token({ sub: `user-${user}`, aud: SUBJECT_AUDIENCE });
    const fresh = Array.from({ length: 3_000 * (WARMUP_SECONDS + DURATION_SECONDS) }, (_, i) =>
      body(assertionFor(), actorFor(), subjectFor((i % USERS) + 1)),
    );
    const assertion = assertionFor();
    const actor = actorFor();
    const reused = Array.from({ length: USERS }, (_, i) => body(assertion, actor, subjectFor(i + 1)));

    const url = `${base}/oauth2/token`;
    const rows: Row[] = [
      {
        target: 'broker',
        shape: '(a) fresh tokens',
        round: 1,
        measurement: await measureLoad({ url, method: 'POST', headers: FORM, bodies: fresh, connections: CONNECTIONS }),
      },
      {
        target: 'broker',
        shape: '(b) reused tokens',
        round: 1,
        measurement: await measureLoad({
          url,
          method: 'POST',
          headers: FORM,
          bodies: reused,
          cycle: true,
          connections: CONNECTIONS,
        }),
      },
    ];
    console.log(
      `machine: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model.trim() ?? 'cpu'}; ${(cluster as PostgresCluster).version}; ${USERS} delegations`,
    );
    console.log(
      `impersonation (POST /oauth2/token), ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured`,
    );
    console.table(table(rows, ['p50', 'p95', 'p99']));
    console.log(`peak RSS (VmHWM): broker ${broker.peakRssMb()} MB`);
  }, 900_000);
});
