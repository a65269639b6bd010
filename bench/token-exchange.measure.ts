import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess, createPostgresDatabase, freePort, startJwtIssuer, startPostgresCluster, testConfig, testKey, writeConfigFile, type PostgresCluster, type TestJwtIssuer } from '@broker/testing';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';

/**
 * The token-exchange benchmark (issue 7, groundwork): the broker (one process, PostgreSQL)
 * against a plain node:http reference doing the same work, alternating A B A B, in two load
 * shapes: (a) fresh, never-reused tokens; (b) one gateway assertion and 1,000 users' subject
 * tokens reused. Prints numbers; asserts nothing.
 */
const USERS = 1_000;
const DURATION_MS = 5_000;
const CONCURRENCY = 50;
const RESOURCE = 'https://bench-api.example.com';

interface Result {
  readonly target: string;
  readonly shape: string;
  readonly 'req/s': number;
  readonly 'p50 ms': string;
  readonly 'p99 ms': string;
  readonly errors: number;
}

function peakRssMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

async function load(target: string, shape: string, url: string, nextBody: () => string): Promise<Result> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + DURATION_MS;
  const worker = async (): Promise<void> => {
    while (Date.now() < deadline) {
      const body = nextBody();
      const started = process.hrtime.bigint();
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (status !== 200) errors += 1;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (Date.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number): string => (latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0).toFixed(2);
  return { target, shape, 'req/s': Math.round(latencies.length / seconds), 'p50 ms': at(50), 'p99 ms': at(99), errors };
}

describe('token exchange benchmark', () => {
  let cluster: PostgresCluster;
  let issuer: TestJwtIssuer;
  let broker: BrokerProcess;
  let reference: ChildProcess;
  let brokerUrl: string;
  let referenceUrl: string;
  let agentId: string;
  let audience: string;

  beforeAll(async () => {
    const started = await startPostgresCluster();
    if (started === undefined) throw new Error('the token-exchange benchmark needs PostgreSQL (initdb/pg_ctl)');
    cluster = started;
    issuer = await startJwtIssuer('ES256');
    const databaseUrl = await createPostgresDatabase(cluster.url);
    const kek = { id: 'bench-kek', key: testKey() };
    const port = await freePort();
    audience = `http://127.0.0.1:${port}`;
    const { file } = writeConfigFile({
      server: { enduser: { port, public_url: audience }, admin: { port: 0 } },
      storage: { backend: 'postgres', postgres: { connection_url: databaseUrl, pool_size: 10 } },
      encryption: { keys: [kek], current_key_id: kek.id },
      third_party_oauth2: { jwe_keys: [{ id: 'bench-jwe', key: testKey() }] },
      token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
      // Measured with production logging: one JSON line per request.
      log: { level: 'info' },
    });
    broker = new BrokerProcess('broker', ['--config', file]);
    const urls = await broker.listening(['enduser', 'admin']);
    brokerUrl = `${urls.enduser as string}/oauth2/token`;
    const admin = (path: string, body: unknown): Promise<{ id: string }> =>
      fetch(`${urls.admin as string}${path}`, { method: 'POST', headers: { 'x-remote-user': 'bench', 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ id: string }>);
    const service = await admin('/api/services', { display_name: 'Bench API', client_id: 'c', issuer_uri: 'https://idp.example.com', authorization_endpoint: 'https://idp.example.com/a', token_endpoint: 'https://idp.example.com/t', protected_resources: [RESOURCE] });
    const set = await admin('/api/permission-sets', { name: 'Bench', service_scopes: [{ service_id: service.id, scopes: ['read'] }] });
    agentId = (await admin('/api/agents', { display_name: 'Bench Agent', permission_sets: [{ permission_set_id: set.id }] })).id;

    // Seed grants and sealed sessions for USERS users directly in the database.
    const cipher = new EnvelopeCipher(testConfig({ encryption: { keys: [kek], current_key_id: kek.id } }));
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    await db.query(`INSERT INTO grants (id, principal, agent_id, valid_until, created_at, updated_at) SELECT gen_random_uuid(), 'user-' || i, $1, NULL, now(), now() FROM generate_series(1, $2) AS i`, [agentId, USERS]);
    await db.query(`INSERT INTO grant_delegations (grant_id, permission_set_id, service_id, scopes, position) SELECT id, $1, $2, '["read"]', 0 FROM grants WHERE agent_id = $3`, [set.id, service.id, agentId]);
    for (let i = 1; i <= USERS; i += 1) {
      const principal = `user-${i}`;
      await db.query(`INSERT INTO third_party_sessions (id, principal, service_id, access_token_envelope, refresh_token_envelope, token_type, scopes, access_token_expires_at, refresh_token_expires_at, initiated_at, updated_at) VALUES ($1, $2, $3, $4, NULL, 'Bearer', '["read"]', now() + interval '1 day', NULL, now(), now())`, [
        randomUUID(),
        principal,
        service.id,
        cipher.encrypt(`third-party-token-of-${principal}`, bindings.sessionToken(service.id, principal, 'access_token')),
      ]);
    }
    await db.query('ANALYZE');
    await db.end();

    reference = spawn(process.execPath, [join('bench', 'reference-server.mjs'), JSON.stringify({ jwk: issuer.publicJwk, issuer: issuer.issuer, audience, databaseUrl, kek })], { stdio: ['ignore', 'pipe', 'inherit'] });
    referenceUrl = await new Promise<string>((resolve) => reference.stdout?.once('data', (chunk: Buffer) => resolve(`${(JSON.parse(chunk.toString()) as { url: string }).url}/token`)));
  }, 300_000);

  afterAll(async () => {
    reference?.kill();
    broker?.signal('SIGTERM');
    await broker?.exited;
    await issuer?.stop();
    cluster?.stop();
  });

  it('prints broker vs reference, shapes (a) and (b)', async () => {
    const form = (assertion: string, subject: string): string =>
      new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
        subject_token: subject,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: RESOURCE,
      }).toString();
    const fresh = async (count: number): Promise<string[]> => {
      const bodies: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const user = `user-${(i % USERS) + 1}`;
        bodies.push(form(await issuer.sign({ sub: 'gateway', jti: randomUUID() }, { audience, ttlSeconds: 3600 }), await issuer.sign({ sub: user, azp: agentId, jti: randomUUID() }, { ttlSeconds: 3600 })));
      }
      return bodies;
    };
    const assertion = await issuer.sign({ sub: 'gateway' }, { audience, ttlSeconds: 3600 });
    const subjects: string[] = [];
    for (let i = 1; i <= USERS; i += 1) subjects.push(await issuer.sign({ sub: `user-${i}`, azp: agentId }, { ttlSeconds: 3600 }));
    const reused = subjects.map((subject) => form(assertion, subject));

    const results: Result[] = [];
    for (const round of [1, 2]) {
      for (const [target, url] of [['broker', brokerUrl], ['reference', referenceUrl]] as const) {
        const bodies = await fresh(15_000);
        let next = 0;
        results.push(await load(`${target} (round ${round})`, '(a) fresh tokens', url, () => bodies[next++ % bodies.length] as string));
        let i = 0;
        results.push(await load(`${target} (round ${round})`, '(b) reused tokens', url, () => reused[i++ % reused.length] as string));
      }
    }
    console.log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; PostgreSQL: ${cluster.version}; ${USERS} grants and sessions; ${CONCURRENCY} concurrent, ${DURATION_MS / 1000} s per run`);
    console.table(results);
    console.log(`peak RSS: broker ${peakRssMb(broker.pid)} MB, reference ${peakRssMb(reference.pid)} MB`);
  }, 600_000);
});
