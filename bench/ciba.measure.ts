import { cpus } from 'node:os';
import { startPostgresCluster, type PostgresCluster } from '@broker/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { benchUsers, count, seconds, SMALL, USERS } from './deployment';
import { deployBroker, type BrokerDeployment } from './exchange-deployment';
import { GatewayIssuer } from './gateway-issuer';
import { alternate, averages, DURATION_SECONDS, FORM_HEADERS, measureLoad, ratio, table, WARMUP_SECONDS } from './load';
import { takeMachine } from './machine-lock';

/**
 * The CIBA poll (OpenID CIBA Core 1.0 §10.1, poll mode) while the person has not decided:
 * the token endpoint answers 400 `authorization_pending` (§11). An agent polls once per
 * interval for as long as the person takes, so this answer is the token endpoint's most
 * frequent CIBA traffic. Measured next to `client_credentials` (the cheapest grant: a cached
 * client and one signature), alternating run by run, on PostgreSQL.
 *
 * Each poll is one conditional UPDATE of the request's row (it records the poll's time; a
 * poll inside the interval answers `slow_down` and grows the row's interval instead). So the
 * run polls REQUESTS pending requests in turn, each at most once per INTERVAL (the pool is
 * sized so that a full turn takes longer than the interval at the fastest rate seen), and
 * after each run counts the rows whose interval grew: a row that grew answered `slow_down`
 * at least once, and the run is reported invalid.
 *
 * Prints numbers; asserts nothing about them. What to compare: a pending poll should cost about
 * what a token request usually costs (client authentication and one statement, no signature).
 */
const CONNECTIONS = 50;
const ROUNDS = 2;
/** The poll interval the broker is configured with (`oauth2_authorization_server.ciba.interval`). */
const INTERVAL_SECONDS = 1;
/**
 * Pending requests polled in turn: five per bench user. A turn at 3,000 polls/s still takes
 * longer than the interval; making them costs about 8 ms each (16 at a time) before the runs.
 */
const REQUESTS = 5 * USERS;
/** The MCP server the requests are for (registered as a protected resource). */
const CIBA_RESOURCE = 'https://payments.bench.example/mcp';
const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';

async function post(url: string, body: string): Promise<Response> {
  return fetch(url, { method: 'POST', headers: FORM_HEADERS, body });
}

/** `REQUESTS` CIBA requests for the bench users in turn, `parallel` at a time; their auth_req_ids. */
async function createRequests(
  endpoint: string,
  client: { id: string; secret: string },
  parallel: number,
): Promise<string[]> {
  const users = benchUsers(SMALL);
  const ids: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let n = next++; n < REQUESTS; n = next++) {
      const response = await post(
        endpoint,
        new URLSearchParams({
          client_id: client.id,
          client_secret: client.secret,
          login_hint: users[n % USERS] as string,
          binding_message: `Invoice ${n}`,
          authorization_details: JSON.stringify([
            {
              type: 'urn:agent-identity-broker:tool-call',
              locations: [CIBA_RESOURCE],
              tool: 'send_payment',
              arguments: { to: 'acme@example.com', amount_eur: n },
              risk: 'critical',
            },
          ]),
        }).toString(),
      );
      if (response.status !== 200) throw new Error(`bc-authorize: ${response.status} ${await response.text()}`);
      ids.push(((await response.json()) as { auth_req_id: string }).auth_req_id);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}

/** Pending CIBA rows whose interval grew past the configured one: each answered slow_down at least once. */
async function slowedDown(databaseUrl: string): Promise<number> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM approvals WHERE ciba_request_sha256 IS NOT NULL AND ciba_interval_ms > $1',
      [INTERVAL_SECONDS * 1000],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await db.end();
  }
}

async function ciba(deployment: BrokerDeployment): Promise<void> {
  const { client_secret: secret } = await deployment.adminPost<{ client_secret: string }>(
    `/api/agents/${deployment.agentId}/client-credentials`,
    {},
  );
  const client = { id: deployment.agentId, secret };
  await deployment.adminPost('/api/resources', {
    display_name: 'Payments MCP',
    resource_uri: CIBA_RESOURCE,
    scopes: [{ scope: 'read', description: 'Read' }],
  });
  const token = `${deployment.broker.enduserUrl}/oauth2/token`;
  const clientCredentials = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: client.id,
    client_secret: secret,
    scope: 'read',
  }).toString();
  const issued = await post(token, clientCredentials);
  if (issued.status !== 200) throw new Error(`client_credentials: ${issued.status} ${await issued.text()}`);

  const started = process.hrtime.bigint();
  const ids = await createRequests(`${deployment.broker.enduserUrl}/oauth2/bc-authorize`, client, 16);
  console.log(
    `${count(ids.length)} CIBA requests made (POST /oauth2/bc-authorize, 16 at a time) in ${seconds(started)} s`,
  );
  const polls = ids.map((id) =>
    new URLSearchParams({
      grant_type: CIBA_GRANT,
      auth_req_id: id,
      client_id: client.id,
      client_secret: secret,
    }).toString(),
  );
  const probe = await post(token, polls[0] as string);
  const answer = (await probe.json()) as { error?: string };
  if (probe.status !== 400 || answer.error !== 'authorization_pending')
    throw new Error(`a poll answered ${probe.status} ${JSON.stringify(answer)}`);
  // The probe was the first poll of request 0: wait its interval out before the runs start.
  await new Promise((resolve) => setTimeout(resolve, INTERVAL_SECONDS * 1000));

  const shapes = [{ name: 'client_credentials' }, { name: 'CIBA poll (authorization_pending)' }] as const;
  const grown: { round: number; rows: number }[] = [];
  let fastest = 0;
  const rows = await alternate(ROUNDS, [{ name: 'token endpoint' }], shapes, async (_shape, target, round) => {
    if (target.name === 'client_credentials')
      return measureLoad({
        url: token,
        method: 'POST',
        headers: FORM_HEADERS,
        bodies: [clientCredentials],
        connections: CONNECTIONS,
      });
    if (fastest * INTERVAL_SECONDS * 1.5 > polls.length)
      console.log(`warning: ${count(polls.length)} requests may be too few for ${Math.round(fastest)} polls/s`);
    const run = await measureLoad({
      url: token,
      method: 'POST',
      headers: FORM_HEADERS,
      bodies: polls,
      cycle: true,
      connections: CONNECTIONS,
      expectedStatus: 400,
    });
    fastest = Math.max(fastest, run.rps);
    const slowed = await slowedDown(deployment.db.databaseUrl);
    grown.push({ round, rows: slowed });
    // A row that answered slow_down makes the run a measure of something else.
    return slowed === 0
      ? run
      : { ...run, non2xx: run.non2xx + slowed, statusCodes: { ...run.statusCodes, slow_down: slowed } };
  });
  console.log(
    `\nCIBA poll vs client_credentials on PostgreSQL (POST /oauth2/token), ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, alternating; ${count(polls.length)} pending requests polled in turn, interval ${INTERVAL_SECONDS} s`,
  );
  console.table(table(rows));
  const cc = averages(rows, 'client_credentials', 'token endpoint');
  const pending = averages(rows, 'CIBA poll (authorization_pending)', 'token endpoint');
  console.table([
    {
      measure: 'CIBA poll (authorization_pending)',
      target: '≈ 1x',
      'req/s vs client_credentials': ratio(
        { value: pending.rps, valid: pending.valid },
        { value: cc.rps, valid: cc.valid },
      ),
      'p99 vs client_credentials': ratio(
        { value: pending.p99, valid: pending.valid },
        { value: cc.p99, valid: cc.valid },
      ),
    },
  ]);
  console.log(
    `rows that answered slow_down (interval grew): ${grown.map((g) => `round ${g.round}: ${g.rows}`).join(', ')}`,
  );
}

describe('CIBA poll benchmark (PostgreSQL)', () => {
  let releaseMachine: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  let deployment: BrokerDeployment | undefined;

  beforeAll(async () => {
    releaseMachine = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the CIBA benchmark needs PostgreSQL (initdb/pg_ctl)');
    issuer = await GatewayIssuer.start();
    console.log(
      `machine: node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${cluster.version}`,
    );
  }, 900_000);

  afterAll(async () => {
    await deployment?.stop();
    await issuer?.stop();
    cluster?.stop();
    releaseMachine?.();
  });

  it(`${SMALL.label}: the CIBA poll answered authorization_pending next to client_credentials`, async () => {
    deployment = await deployBroker(
      cluster as PostgresCluster,
      issuer as GatewayIssuer,
      SMALL,
      {},
      {
        oauth2_authorization_server: {
          ciba: { enabled: true, interval: `${INTERVAL_SECONDS}s`, default_expiry: '1h', max_expiry: '1h' },
        },
        // Five pending requests per person and agent, made within a minute.
        approvals: { rate_limit: { max_pending_per_pair: 100, max_requests_per_minute: 100 } },
      },
    );
    await ciba(deployment);
  }, 900_000);
});
