import { cpus } from 'node:os';
import { startPostgresCluster, type PostgresCluster } from '@broker/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectOk, SMALL, type Dataset } from './deployment';
import { deploy, SHAPES, type Deployment } from './exchange-deployment';
import { GatewayIssuer } from './gateway-issuer';
import {
  alternate,
  averages,
  DURATION_SECONDS,
  FORM_HEADERS,
  measureLoad,
  ratio,
  table,
  WARMUP_SECONDS,
  type Row,
} from './load';
import { takeMachine } from './machine-lock';
import { startScriptServer } from './servers';

/**
 * The token-exchange benchmark, on a throwaway PostgreSQL cluster.
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

/** 200k users who each delegated to 5 agents: 1M grants (and delegations), 200k sessions. */
const LARGE: Dataset = { label: '1M grants, 200k sessions', principals: 200_000, agents: 5 };

interface Target {
  readonly name: string;
  readonly url: string;
}

/** Shapes (a) and (b), broker and reference alternating, ROUNDS rounds. */
function tokenExchange(deployment: Deployment): Promise<Row[]> {
  const targets: Target[] = [
    { name: 'broker', url: `${deployment.broker.enduserUrl}/oauth2/token` },
    { name: 'reference', url: `${deployment.reference.url}/token` },
  ];
  return alternate(ROUNDS, SHAPES, targets, async (shape, target) => {
    const { bodies, cycle } = shape.bodies(deployment);
    const run = await measureLoad({
      url: target.url,
      method: 'POST',
      headers: FORM_HEADERS,
      bodies,
      cycle,
      connections: CONNECTIONS,
    });
    shape.spent?.(deployment, run);
    return run;
  });
}

function printTokenExchange(deployment: Deployment, rows: readonly Row[]): void {
  console.log(
    `\n${deployment.dataset.label}: token exchange, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, broker and reference alternating`,
  );
  console.table(table(rows));
  console.log(
    `peak RSS (VmHWM): broker ${deployment.broker.peakRssMb()} MB, reference ${deployment.reference.peakRssMb()} MB; shape (a): ${deployment.fresh.summary()}`,
  );
  console.table(
    SHAPES.map(({ name }) => {
      const broker = averages(rows, 'broker', name);
      const reference = averages(rows, 'reference', name);
      return {
        shape: name,
        'req/s broker/reference': ratio(
          { value: broker.rps, valid: broker.valid },
          { value: reference.rps, valid: reference.valid },
        ),
        'p99 broker/reference': ratio(
          { value: broker.p99, valid: broker.valid },
          { value: reference.p99, valid: reference.valid },
        ),
      };
    }),
  );
}

/** client_credentials on the broker next to oidc-provider configured for the same grant, alternating. */
async function clientCredentials(deployment: Deployment): Promise<void> {
  const { client_secret: secret } = await deployment.adminPost<{ client_secret: string }>(
    `/api/agents/${deployment.agentId}/client-credentials`,
    {},
  );
  const form = (clientId: string, clientSecret: string): string =>
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope: 'read',
    }).toString();
  const provider = await startScriptServer('oidc-provider-server.mjs', [], { quiet: true });
  try {
    const targets = [
      { name: 'broker', url: `${deployment.broker.enduserUrl}/oauth2/token`, body: form(deployment.agentId, secret) },
      { name: 'oidc-provider', url: `${provider.url}/token`, body: form('bench', 'bench-secret-0123456789') },
    ];
    for (const target of targets) await expectOk(target.url, target.body);
    const rows = await alternate(ROUNDS, [{ name: 'client_credentials' }], targets, (_shape, target) =>
      measureLoad({
        url: target.url,
        method: 'POST',
        headers: FORM_HEADERS,
        bodies: [target.body],
        connections: CONNECTIONS,
      }),
    );
    console.log(
      `\nclient_credentials (POST /oauth2/token), broker on PostgreSQL vs oidc-provider, ${CONNECTIONS} connections`,
    );
    console.table(table(rows));
    const broker = averages(rows, 'broker', 'client_credentials');
    const reference = averages(rows, 'oidc-provider', 'client_credentials');
    console.log(
      `broker/oidc-provider: req/s ${ratio({ value: broker.rps, valid: broker.valid }, { value: reference.rps, valid: reference.valid })}, p99 ${ratio({ value: broker.p99, valid: broker.valid }, { value: reference.p99, valid: reference.valid })}`,
    );
  } finally {
    await provider.stop();
  }
}

/** GET /oauth2/jwks.json with one key per algorithm (the boot ES256 key, plus ES256, EdDSA, RS256). */
async function jwks(deployment: Deployment): Promise<void> {
  // Added after client_credentials: the newest key may become the signing key.
  for (const algorithm of ['ES256', 'EdDSA', 'RS256'])
    await deployment.adminPost('/api/oauth2-server/signing-keys', { algorithm });
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
    console.log(
      `machine: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}; load: autocannon, ${CONNECTIONS} connections`,
    );
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
          return {
            target,
            shape: name,
            'p99 ratio': ratio({ value: large.p99, valid: large.valid }, { value: small.p99, valid: small.valid }),
          };
        }),
      ),
    );
  }, 900_000);
});
