import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import { LongPollHub } from '@broker/approvals';
import {
  createPostgresDatabase,
  freePort,
  http,
  startJwtIssuer,
  startPostgresCluster,
  testKey,
  type PostgresCluster,
  type TestJwtIssuer,
} from '@broker/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { takeMachine } from './machine-lock';
import { startBroker, type BrokerServer } from './servers';
import { grantedAgent } from '../test/support/granted-agent';

/**
 * 5,000 concurrent held long-polls (`GET /api/approvals` with `If-None-Match` equal
 * to the current version) against one broker process (both servers, a throwaway PostgreSQL
 * 15 cluster, production logging to a file; PostgreSQL rather than PGlite because the
 * embedded database's own hundreds of MB of wasm memory would drown the RSS delta being
 * measured). Prints the broker's resident memory per held waiter, the latency of
 * `GET /health` while they are held (and without them, for comparison), and how long one
 * change takes to answer all of them. Numbers only; nothing asserts them.
 *
 * Alone: `npm run build && npx vitest run --project measure bench/approvals.measure.ts`.
 */
const WAITERS = 5_000;
const OPEN_BATCH = 250;
const HEALTH_REQUESTS = 2_000;
const HEALTH_CONCURRENCY = 10;
const PRINCIPAL = 'bench@example.com';

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The median of five RSS readings 400 ms apart (garbage collection moves single readings). */
async function settledRssMb(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    readings.push(rssMb(pid));
    await sleep(400);
  }
  return readings.sort((a, b) => a - b)[2] as number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

describe('approvals long-poll sync', () => {
  let issuer: TestJwtIssuer;
  let cluster: PostgresCluster | undefined;
  let broker: BrokerServer;
  let releaseMachine: (() => void) | undefined;
  let assertion: string;
  let agentId: string;

  beforeAll(async () => {
    releaseMachine = await takeMachine();
    issuer = await startJwtIssuer('ES256');
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('this benchmark needs PostgreSQL 15 (initdb/pg_ctl on PATH)');
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    broker = await startBroker({
      server: { enduser: { port, public_url: publicUrl } },
      storage: {
        backend: 'postgres',
        postgres: { connection_url: await createPostgresDatabase(cluster.url), pool_size: 10 },
      },
      encryption: { keys: [{ id: 'bench', key: testKey() }], current_key_id: 'bench' },
      third_party_oauth2: { jwe_keys: [{ id: 'bench', key: testKey() }] },
      token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
    });
    assertion = await issuer.sign(
      { sub: 'bench-gateway', jti: randomUUID() },
      { audience: publicUrl, ttlSeconds: 3600 },
    );
    // Only an agent the person allows may ask (docs/approvals.md "Grants and approvals").
    agentId = (await grantedAgent({ admin: broker.adminUrl, enduser: broker.enduserUrl }, [PRINCIPAL], 'Bench')).id;
    const created = await http(`${broker.enduserUrl}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await issuer.sign({ sub: PRINCIPAL, azp: agentId }, { audience: publicUrl, ttlSeconds: 3600 })}`,
        'x-client-assertion': assertion,
      },
      body: JSON.stringify({ metadata: {}, tool_name: 'bench_tool', arguments: { n: 1 } }),
    });
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  }, 120_000);

  afterAll(async () => {
    await broker?.stop();
    await issuer?.stop();
    cluster?.stop();
    releaseMachine?.();
  });

  const syncPath = `/api/approvals?principal=${encodeURIComponent(PRINCIPAL)}`;

  async function healthLatencies(): Promise<{ p50: number; p99: number; max: number }> {
    const agent = new Agent({ keepAlive: true, maxSockets: HEALTH_CONCURRENCY });
    const url = new URL('/health', broker.enduserUrl);
    const samples: number[] = [];
    let next = 0;
    const one = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const started = process.hrtime.bigint();
        httpRequest(url, { agent }, (response) => {
          response.resume();
          response.on('end', () => {
            samples.push(Number(process.hrtime.bigint() - started) / 1e6);
            resolve();
          });
        })
          .on('error', reject)
          .end();
      });
    await Promise.all(
      Array.from({ length: HEALTH_CONCURRENCY }, async () => {
        while (next < HEALTH_REQUESTS) {
          next += 1;
          await one();
        }
      }),
    );
    agent.destroy();
    samples.sort((a, b) => a - b);
    return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: percentile(samples, 100) };
  }

  it(`prints memory per held waiter and /health p99 with ${WAITERS.toLocaleString('en')} held long-polls`, async () => {
    const etag = (await http(`${broker.enduserUrl}${syncPath}`, { headers: { 'x-client-assertion': assertion } }))
      .headers.etag as string;
    // Warm-up: JIT, JWT verification cache, pools.
    await healthLatencies();
    for (let i = 0; i < 50; i += 1)
      await http(`${broker.enduserUrl}${syncPath}`, { headers: { 'x-client-assertion': assertion } });
    const idleHealth = await healthLatencies();
    const rssBefore = await settledRssMb(broker.pid);

    const answers: Promise<number>[] = [];
    const errors: string[] = [];
    let answered = 0;
    const url = new URL(syncPath, broker.enduserUrl);
    for (let opened = 0; opened < WAITERS; opened += OPEN_BATCH) {
      for (let i = 0; i < OPEN_BATCH; i += 1) {
        answers.push(
          new Promise((resolve) => {
            httpRequest(
              url,
              {
                agent: false,
                headers: { 'x-client-assertion': assertion, 'if-none-match': etag, 'x-long-poll-timeout': '120' },
              },
              (response: IncomingMessage) => {
                response.resume();
                response.on('end', () => {
                  answered += 1;
                  resolve(response.statusCode ?? 0);
                });
              },
            )
              .on('error', (error: Error) => {
                errors.push(`${error.message}`);
                resolve(0);
              })
              .end();
          }),
        );
      }
      await sleep(100);
    }
    // Let the broker take every request in (nothing is answered while they are held).
    await sleep(2_000);
    const rssHeld = await settledRssMb(broker.pid);
    const heldHealth = await healthLatencies();
    const stillHeld = WAITERS - answered;

    // One change answers them all.
    const changedAt = performance.now();
    await http(`${broker.enduserUrl}/api/approvals/pending`, { headers: { 'x-remote-user': PRINCIPAL } }).then(
      async (response) => {
        const id = response.json<{ data: { id: string }[] }>().data[0]?.id as string;
        await http(`${broker.enduserUrl}/api/approvals/${id}/approve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-remote-user': PRINCIPAL },
          body: '{"persistence":"once"}',
        });
      },
    );
    const statuses = await Promise.all(answers);
    const wakeAllMs = performance.now() - changedAt;

    const perWaiterKb = ((rssHeld - rssBefore) * 1024) / WAITERS;
    console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`);
    console.table([
      {
        measure: 'held long-polls',
        value: `${stillHeld} of ${WAITERS} held (${WAITERS - stillHeld} answered early, ${errors.length} connection errors)`,
      },
      {
        measure: 'broker RSS before / with the waiters held',
        value: `${rssBefore.toFixed(1)} MB / ${rssHeld.toFixed(1)} MB`,
      },
      { measure: 'RSS per held waiter', value: `${perWaiterKb.toFixed(1)} KB` },
      {
        measure: 'GET /health idle: p50 / p99 / max',
        value: `${idleHealth.p50.toFixed(2)} / ${idleHealth.p99.toFixed(2)} / ${idleHealth.max.toFixed(2)} ms`,
      },
      {
        measure: `GET /health with ${WAITERS} held: p50 / p99 / max`,
        value: `${heldHealth.p50.toFixed(2)} / ${heldHealth.p99.toFixed(2)} / ${heldHealth.max.toFixed(2)} ms`,
      },
      {
        measure: 'one change → all waiters answered',
        value: `${wakeAllMs.toFixed(0)} ms (${statuses.filter((s) => s === 200).length} × 200)`,
      },
    ]);
  });

  it(`prints the long-poll hub's own heap per waiter (${WAITERS.toLocaleString('en')} waiters, in-process)`, async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const hub = new LongPollHub();
    gc();
    const before = process.memoryUsage().heapUsed;
    const controllers = Array.from({ length: WAITERS }, () => new AbortController());
    const waits = controllers.map((controller, i) => hub.wait(i, 120_000, controller.signal));
    gc();
    const held = process.memoryUsage().heapUsed;
    hub.changed(WAITERS + 1);
    await Promise.all(waits);
    console.table([
      {
        measure: 'hub heap per waiter (waiter record, promise, abort signal and listener)',
        value: `${((held - before) / WAITERS).toFixed(0)} bytes`,
      },
    ]);
  });
});
