import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startPostgresCluster, type PostgresCluster } from '@broker/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { benchUsers, count, SMALL, USERS } from './deployment';
import { deployBroker, type BrokerDeployment } from './exchange-deployment';
import { GatewayIssuer } from './gateway-issuer';
import {
  alternate,
  averages,
  DURATION_SECONDS,
  FORM_HEADERS,
  FRESH_RATE_CEILING,
  measureLoad,
  ratio,
  table,
  WARMUP_SECONDS,
  type Measurement,
} from './load';
import { takeMachine } from './machine-lock';
import { cpuSecondsBetween, treeCpuTicks } from './servers';

/**
 * The local authorization server's token lifecycle on PostgreSQL, in one run: the
 * `refresh_token` grant, RFC 7662 introspection and `client_credentials` with a DPoP proof
 * (RFC 9449) next to plain `client_credentials` (the cheapest grant: a cached client and one
 * signature), alternating run by run.
 *
 * - client_credentials: one body, reused (as a client does).
 * - client_credentials + DPoP: the same body, each request with a proof never sent before
 *   (fresh `jti` and `iat`, one client key, as a client makes them), signed by this process
 *   before the run so the load generator only sends it; the answer is a DPoP-bound token.
 * - refresh_token: every request presents a refresh token never presented before (each is
 *   single use: a second presentation is a reuse and ends its family), for the bench users'
 *   grants, seeded straight into `refresh_tokens` as the authorization code grant stores them
 *   (random value, its SHA-256, bound to the agent, its credential and the grant).
 * - introspection: a resource server asking about 1,000 users' access tokens (each issued by a
 *   refresh), cycled, authenticated as the agent the tokens were issued to.
 * - ID-JAG (JWT bearer grant): every request presents an enterprise IdP's identity assertion
 *   never presented before (each is single use), for one of 1,000 users and a registered MCP
 *   server, signed by this process before the run; the broker verifies it, spends its `jti`
 *   and upserts the person's enterprise authorization.
 * Prints numbers; asserts nothing about them. Targets: refresh ≥ 0.8x, introspection ≥ 1.5x,
 * client_credentials + DPoP ≥ 0.7x client_credentials.
 */
const CONNECTIONS = 50;
const ROUNDS = 2;

/** Refresh tokens stored for the bench users, each handed out once. */
class RefreshPool {
  private values: string[] = [];
  private fastestRps = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly agentId: string,
    private readonly agentSecret: string,
  ) {}

  /** Seeds what the next run may spend (outside the measurement) and returns its bodies. */
  async ready(): Promise<string[]> {
    const wanted = Math.ceil(Math.max(FRESH_RATE_CEILING, 1.5 * this.fastestRps) * (WARMUP_SECONDS + DURATION_SECONDS));
    if (this.values.length < wanted) this.values.push(...(await this.seed(wanted - this.values.length)));
    return this.values.map((value) => this.body(value));
  }

  body(value: string): string {
    return new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: value,
      client_id: this.agentId,
      client_secret: this.agentSecret,
    }).toString();
  }

  spend(run: Measurement): void {
    this.values = this.values.slice(run.spent);
    this.fastestRps = Math.max(this.fastestRps, run.rps);
  }

  /** `n` new families, one per bench user in turn, as `RefreshTokens.start` stores them. */
  async seed(n: number): Promise<string[]> {
    const db = new Client({ connectionString: this.databaseUrl });
    await db.connect();
    try {
      const users = benchUsers(SMALL);
      const values = Array.from({ length: n }, () => randomBytes(32).toString('base64url'));
      const BATCH = 10_000;
      for (let first = 0; first < n; first += BATCH) {
        const batch = values.slice(first, first + BATCH);
        await db.query(
          `INSERT INTO refresh_tokens (id, family_id, token_sha256, agent_id, principal, grant_id, resources, scopes, credential_sha256, client_id_url, issued_at, idle_expires_at, family_expires_at)
           SELECT gen_random_uuid(), gen_random_uuid(), t.sha, g.agent_id, g.principal, g.id, '[]', '["read","offline_access"]', c.secret_sha256, NULL, now(), now() + interval '7 days', now() + interval '30 days'
             FROM unnest($1::bytea[], $2::text[]) AS t(sha, principal)
             JOIN grants g ON g.principal = t.principal AND g.agent_id = $3
             JOIN agent_client_credentials c ON c.agent_id = g.agent_id`,
          [
            batch.map((value) => createHash('sha256').update(value).digest()),
            batch.map((_, i) => users[(first + i) % USERS] as string),
            this.agentId,
          ],
        );
      }
      await db.query('ANALYZE refresh_tokens');
      return values;
    } finally {
      await db.end();
    }
  }
}

/** JWT bearer grant bodies, each with an identity assertion (ID-JAG) never presented before, for 1,000 users in turn. */
class IdJagBodies {
  private fastestRps = 0;
  private next = 0;

  constructor(
    private readonly issuer: GatewayIssuer,
    private readonly fields: { audience: string; clientId: string; secret: string; resource: string },
  ) {}

  /** Bodies for the next run, signed now (outside the measurement): as many as its rate could spend. */
  ready(): string[] {
    const wanted = Math.ceil(Math.max(FRESH_RATE_CEILING, 1.5 * this.fastestRps) * (WARMUP_SECONDS + DURATION_SECONDS));
    return Array.from({ length: wanted }, () => this.body());
  }

  body(): string {
    const { audience, clientId, secret, resource } = this.fields;
    this.next += 1;
    const assertion = this.issuer.idJag({
      sub: `enterprise-user-${this.next % USERS}`,
      aud: audience,
      client_id: clientId,
      resource,
      scope: 'read',
    });
    return new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion,
      client_id: clientId,
      client_secret: secret,
    }).toString();
  }

  sawRate(run: Measurement): void {
    this.fastestRps = Math.max(this.fastestRps, run.rps);
  }
}

/** The MCP server the ID-JAG runs are for (registered as a protected resource offering `read`). */
const ENTERPRISE_RESOURCE = 'https://mcp.bench.example/mcp';

/** DPoP proofs (RFC 9449 §4.2) for the token endpoint, each handed out once, ES256 with one client key. */
class DpopProofs {
  private readonly privateKey: KeyObject;
  private readonly header: string;
  private fastestRps = 0;

  constructor(private readonly htu: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    this.privateKey = privateKey;
    this.header = base64url({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } });
  }

  /**
   * Proofs for the next run, signed now (outside the measurement): as many as its rate could
   * spend, each `iat` now, well inside the broker's `proof_max_age` when the run sends it.
   */
  ready(): Record<string, string>[] {
    const wanted = Math.ceil(Math.max(FRESH_RATE_CEILING, 1.5 * this.fastestRps) * (WARMUP_SECONDS + DURATION_SECONDS));
    return Array.from({ length: wanted }, () => ({ dpop: this.proof() }));
  }

  /** One proof: a fresh `jti`, `iat` now. */
  proof(): string {
    const claims = { jti: randomBytes(16).toString('base64url'), htm: 'POST', htu: this.htu, iat: now() };
    const input = `${this.header}.${base64url(claims)}`;
    const signature = sign('sha256', Buffer.from(input), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }

  /**
   * Sizes the next pools: plain client_credentials runs first in every round and is the DPoP
   * variant's ceiling, so its rate counts as well as the variant's own.
   */
  sawRate(run: Measurement): void {
    this.fastestRps = Math.max(this.fastestRps, run.rps);
  }
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = (): number => Math.floor(Date.now() / 1000);

/** The postmaster's pid (the parent of a backend of this database), to count PostgreSQL's CPU time. */
async function postmasterPid(databaseUrl: string): Promise<number> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const backend = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
    const stat = readFileSync(`/proc/${backend}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } finally {
    await db.end();
  }
}

/** CPU µs per answered request of the broker and of PostgreSQL during each run (two cores shared with the load generator). */
interface CpuShare {
  readonly target: string;
  readonly round: number;
  readonly brokerUs: number;
  readonly postgresUs: number;
}

async function post<T>(url: string, body: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { ...FORM_HEADERS, ...headers }, body });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function lifecycle(deployment: BrokerDeployment, issuer: GatewayIssuer): Promise<void> {
  const { client_secret: secret } = await deployment.adminPost<{ client_secret: string }>(
    `/api/agents/${deployment.agentId}/client-credentials`,
    {},
  );
  const token = `${deployment.broker.enduserUrl}/oauth2/token`;
  const introspect = `${deployment.broker.enduserUrl}/oauth2/introspect`;
  const clientCredentials = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: deployment.agentId,
    client_secret: secret,
    scope: 'read',
  }).toString();
  await post(token, clientCredentials);
  const proofs = new DpopProofs(token);
  const bound = await post<{ token_type: string }>(token, clientCredentials, { dpop: proofs.proof() });
  if (bound.token_type !== 'DPoP')
    throw new Error(`a token request with a DPoP proof answered ${JSON.stringify(bound)}`);

  await deployment.adminPost('/api/resources', {
    display_name: 'Bench MCP',
    resource_uri: ENTERPRISE_RESOURCE,
    scopes: [{ scope: 'read', description: 'Read' }],
  });
  const idJags = new IdJagBodies(issuer, {
    audience: deployment.broker.enduserUrl,
    clientId: deployment.agentId,
    secret,
    resource: ENTERPRISE_RESOURCE,
  });
  const enterprise = await post<{ refresh_token?: string; resource: string }>(token, idJags.body());
  if (enterprise.resource !== ENTERPRISE_RESOURCE || enterprise.refresh_token !== undefined)
    throw new Error(`an ID-JAG answered ${JSON.stringify(enterprise)}`);

  const pool = new RefreshPool(deployment.db.databaseUrl, deployment.agentId, secret);
  // 1,000 users' access tokens (one refresh each, outside the measurement) for the introspection run.
  const accessTokens: string[] = [];
  for (const value of await pool.seed(USERS))
    accessTokens.push((await post<{ access_token: string }>(token, pool.body(value))).access_token);
  const introspections = accessTokens.map((accessToken) =>
    new URLSearchParams({
      token: accessToken,
      token_type_hint: 'access_token',
      client_id: deployment.agentId,
      client_secret: secret,
    }).toString(),
  );
  const answer = await post<{ active: boolean }>(introspect, introspections[0] as string);
  if (answer.active !== true) throw new Error(`introspection answered ${JSON.stringify(answer)}`);

  const shapes = [
    { name: 'client_credentials' },
    { name: 'client_credentials + DPoP' },
    { name: 'refresh_token' },
    { name: 'introspection' },
    { name: 'ID-JAG' },
  ] as const;
  const postmaster = await postmasterPid(deployment.db.databaseUrl);
  const cpu: CpuShare[] = [];
  const rows = await alternate(ROUNDS, [{ name: 'lifecycle' }], shapes, async (_shape, target, round) => {
    const broker = treeCpuTicks(deployment.broker.pid);
    const postgres = treeCpuTicks(postmaster);
    const run = await measure(target.name);
    const answered = Math.max(1, run.requests);
    cpu.push({
      target: target.name,
      round,
      brokerUs: (cpuSecondsBetween(broker, treeCpuTicks(deployment.broker.pid)) * 1e6) / answered,
      postgresUs: (cpuSecondsBetween(postgres, treeCpuTicks(postmaster)) * 1e6) / answered,
    });
    return run;
  });
  async function measure(name: (typeof shapes)[number]['name']): Promise<Measurement> {
    switch (name) {
      case 'client_credentials': {
        const run = await measureLoad({
          url: token,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies: [clientCredentials],
          connections: CONNECTIONS,
        });
        proofs.sawRate(run);
        return run;
      }
      case 'client_credentials + DPoP': {
        const run = await measureLoad({
          url: token,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies: [clientCredentials],
          headersPerRequest: proofs.ready(),
          cycle: false,
          connections: CONNECTIONS,
        });
        proofs.sawRate(run);
        return run;
      }
      case 'refresh_token': {
        const run = await measureLoad({
          url: token,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies: await pool.ready(),
          cycle: false,
          connections: CONNECTIONS,
        });
        pool.spend(run);
        return run;
      }
      case 'ID-JAG': {
        const run = await measureLoad({
          url: token,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies: idJags.ready(),
          cycle: false,
          connections: CONNECTIONS,
        });
        idJags.sawRate(run);
        return run;
      }
      case 'introspection':
        return measureLoad({
          url: introspect,
          method: 'POST',
          headers: FORM_HEADERS,
          bodies: introspections,
          cycle: true,
          connections: CONNECTIONS,
        });
    }
  }
  console.log(
    `\ntoken lifecycle on PostgreSQL (POST /oauth2/token, POST /oauth2/introspect), ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s measured per run, alternating`,
  );
  console.table(table(rows));
  const cc = averages(rows, 'client_credentials', 'lifecycle');
  const of = (name: string) => averages(rows, name, 'lifecycle');
  const targets: Record<string, string> = {
    'client_credentials + DPoP': '≥ 0.7x',
    refresh_token: '≥ 0.8x',
    introspection: '≥ 1.5x',
    'ID-JAG': '(none)',
  };
  console.table(
    Object.entries(targets).map(([name, target]) => ({
      measure: name,
      target,
      'req/s vs client_credentials': ratio(
        { value: of(name).rps, valid: of(name).valid },
        { value: cc.rps, valid: cc.valid },
      ),
      'p99 vs client_credentials': ratio(
        { value: of(name).p99, valid: of(name).valid },
        { value: cc.p99, valid: cc.valid },
      ),
    })),
  );
  console.log(
    'CPU per request (warm-up included in the time, measured requests in the count): broker process, PostgreSQL (postmaster and backends)',
  );
  console.table(
    cpu.map((c) => ({
      target: c.target,
      round: c.round,
      'broker µs': Math.round(c.brokerUs),
      'postgres µs': Math.round(c.postgresUs),
    })),
  );
  console.log(
    `refresh tokens seeded for the runs: ${count(USERS)} for the access tokens, the rest spent one per request`,
  );
}

describe('token lifecycle benchmark (PostgreSQL)', () => {
  let releaseMachine: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let issuer: GatewayIssuer | undefined;
  let deployment: BrokerDeployment | undefined;

  beforeAll(async () => {
    releaseMachine = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the token lifecycle benchmark needs PostgreSQL (initdb/pg_ctl)');
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

  it(`${SMALL.label}: client_credentials + DPoP, refresh_token, introspection and ID-JAG next to client_credentials`, async () => {
    const gateway = issuer as GatewayIssuer;
    // The gateway's issuer doubles as the enterprise IdP of the ID-JAG runs.
    deployment = await deployBroker(
      cluster as PostgresCluster,
      gateway,
      SMALL,
      {},
      {
        oauth2_authorization_server: {
          enterprise: { trusted_issuers: { issuer_uri: gateway.issuer, jwks_uri: gateway.jwksUri } },
        },
      },
    );
    await lifecycle(deployment, gateway);
  }, 900_000);
});
