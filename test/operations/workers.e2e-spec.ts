import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import {
  ApiClient,
  eventually,
  BrokerProcess,
  createPostgresDatabase,
  freePort,
  http,
  postgresServerUrl,
  startJwtIssuer,
  testKey,
  writeConfigFile,
  type HttpResponse,
  type TestJwtIssuer,
  type ThirdPartyProvider,
} from '@broker/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, grantMail, registerMailService } from '../support/mail-service';

/**
 * `server.workers` runs both servers in N `node:cluster` processes sharing
 * the ports, on PostgreSQL only. With two workers everything that works across two replicas
 * works across the workers (client cache invalidation, approvals wake-ups, single-flight
 * refresh, key bootstrap), `/metrics` sums them, a dead worker is replaced and SIGTERM drains
 * them all. Which worker answered is read from the access-log line of the response's trace id.
 */

const ALICE = 'alice@example.com';
const KEYS = {
  encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
  third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }], discovery: { allowed_networks: ['127.0.0.0/8'] } },
};

/** `count` requests one after the other, each on its own connection (the primary hands connections round-robin). */
async function oneByOne(count: number, send: () => Promise<HttpResponse>): Promise<HttpResponse[]> {
  const responses: HttpResponse[] = [];
  for (let i = 0; i < count; i += 1) responses.push(await send());
  return responses;
}

/** Whether `pid` is a live process (a killed one may linger as a zombie until its new parent reaps it). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('server.workers on PGlite', () => {
  it('refuses more than one worker with exit code 2 and one line naming server.workers', async () => {
    const { file } = writeConfigFile({ server: { workers: 2, enduser: { port: 0 }, admin: { port: 0 } } });
    const broker = new BrokerProcess('broker', ['--config', file]);
    expect((await broker.exited).code).toBe(2);
    expect(broker.stderr.join('')).toMatch(
      /^config error: server\.workers must be 1 with storage\.backend pglite .*\n$/,
    );
  });
});

describe.runIf(postgresServerUrl())('server.workers: 2 on one PostgreSQL', () => {
  it('exits 1 with one line saying why when the first start of the workers fails (port in use), without restarting them', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const { file } = writeConfigFile({
        ...KEYS,
        server: { workers: 2, enduser: { port: 0 }, admin: { port: taken } },
        storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
      });
      const broker = new BrokerProcess('broker', ['--config', file]);
      expect((await broker.exited).code).toBe(1);
      expect(broker.stderr.join('')).toBe(
        `cannot start the admin server: 127.0.0.1:${taken} is already in use (stop the other process or change server.admin.port)\n`,
      );
      expect(broker.records().filter((r) => r.msg === 'worker exited unexpectedly: restarting it')).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('kills a worker that does not stop within the shutdown timeout plus a margin, and exits 1', async () => {
    const { file } = writeConfigFile({
      ...KEYS,
      server: { workers: 2, enduser: { port: 0 }, admin: { port: 0 }, shutdown: { timeout: '1s' } },
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
    });
    const broker = new BrokerProcess('broker', ['--config', file]);
    await broker.waitFor((r) => r.msg === 'all workers started');
    const [stuck, healthy] = broker
      .records()
      .filter((r) => r.msg === 'worker started')
      .map((r) => r.pid as number);
    // A stopped process cannot handle SIGTERM: it stands for a worker that hangs while draining.
    process.kill(stuck as number, 'SIGSTOP');
    broker.signal('SIGTERM');
    expect((await broker.exited).code).toBe(1);
    expect(
      broker.records().find((r) => r.msg === 'workers did not stop within the shutdown timeout: killing them'),
    ).toMatchObject({ level: 'warn', workers: [stuck] });
    expect(broker.records().some((r) => r.msg === 'shutdown complete' && r.pid === healthy)).toBe(true);
    expect(running(stuck as number)).toBe(false);
  });

  it('exits at once on a second signal, killing the workers', async () => {
    const { file } = writeConfigFile({
      ...KEYS,
      server: { workers: 2, enduser: { port: 0 }, admin: { port: 0 }, shutdown: { timeout: '30s' } },
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
    });
    const broker = new BrokerProcess('broker', ['--config', file]);
    await broker.waitFor((r) => r.msg === 'all workers started');
    const workers = broker
      .records()
      .filter((r) => r.msg === 'worker started')
      .map((r) => r.pid as number);
    // Both workers hang while draining (stopped): only the second signal can end the primary before the timeout.
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    broker.signal('SIGINT');
    await broker.waitFor((r) => r.msg === 'signal received: stopping the workers');
    broker.signal('SIGINT');
    expect((await broker.exited).code).toBe(1);
    expect(broker.records().find((r) => r.msg === 'second signal: exiting immediately')).toMatchObject({
      level: 'warn',
      signal: 'SIGINT',
    });
    expect(broker.stdout.join('\n')).not.toContain('did not stop within the shutdown timeout');
    for (const pid of workers) await expect.poll(() => running(pid)).toBe(false);
  });

  describe('two workers', () => {
    let broker: BrokerProcess;
    let issuer: TestJwtIssuer;
    let provider: ThirdPartyProvider;
    let databaseUrl: string;
    let base: string;
    let adminUrl: string;
    let admin: ApiClient;
    let agent: string;
    let service: string;
    const answeredBy = (responses: HttpResponse[]): Promise<number[]> =>
      Promise.all(responses.map((r) => broker.answeredBy(r)));

    beforeAll(async () => {
      issuer = await startJwtIssuer('ES256');
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      databaseUrl = await createPostgresDatabase();
      const { file } = writeConfigFile({
        ...KEYS,
        server: { workers: 2, enduser: { port, public_url: base }, admin: { port: 0 }, shutdown: { timeout: '30s' } },
        storage: { backend: 'postgres', postgres: { connection_url: databaseUrl } },
        token_exchange: {
          client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri },
          subject_token: { audience: 'gateway' },
        },
      });
      broker = new BrokerProcess('broker', ['--config', file]);
      adminUrl = (await broker.listening(['enduser', 'admin'])).admin as string;
      await broker.waitFor((r) => r.msg === 'all workers started');
      admin = new ApiClient(adminUrl);

      const mail = await registerMailService(admin, base);
      ({ provider, service, agent } = mail);
      expect((await grantMail(base, ALICE, mail)).status).toBe(201);
      await connectThirdParty(base, ALICE, service);
    });

    afterAll(async () => {
      if (broker !== undefined && broker.records().every((r) => r.msg !== 'signal received: stopping the workers')) {
        broker.signal('SIGTERM');
        await broker.exited;
      }
      await issuer?.stop();
      await provider?.stop();
    });

    const assertion = (): Promise<string> => issuer.sign({ sub: 'gateway', jti: randomUUID() }, { audience: base });
    const sync = async (headers: Record<string, string> = {}): Promise<HttpResponse> =>
      http(`${base}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
        headers: { 'x-client-assertion': await assertion(), ...headers },
      });

    it('starts two workers that both answer on the shared ports (/health 200 from two pids)', async () => {
      const started = broker.records().filter((r) => r.msg === 'worker started');
      expect(new Set(started.map((r) => r.pid)).size).toBe(2);
      expect(started.every((r) => typeof r.worker === 'number' && r.pid !== broker.pid)).toBe(true);
      const responses = await oneByOne(8, () => http(`${base}/health`));
      expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
      const admins = await oneByOne(4, () => http(`${adminUrl}/health`));
      expect(admins.map((r) => r.status)).toEqual(Array(4).fill(200));
      expect(new Set(await answeredBy(responses))).toEqual(new Set(started.map((r) => r.pid)));
      expect(new Set(await answeredBy(admins)).size).toBe(2);
    });

    it('serves the same signing keys from both workers (one key bootstrap on the shared database)', async () => {
      const responses = await oneByOne(6, () => http(`${base}/oauth2/jwks.json`));
      expect(new Set(await answeredBy(responses)).size).toBe(2);
      expect(new Set(responses.map((r) => r.text)).size).toBe(1);
      expect(responses[0]?.json<{ keys: unknown[] }>().keys.length).toBeGreaterThan(0);
    });

    it('refuses a revoked client credential on every worker once the revocation is written through one of them', async () => {
      const secret = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>()
        .client_secret;
      const issue = (): Promise<HttpResponse> =>
        http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: agent,
            client_secret: secret,
          }).toString(),
        });
      const accepted = await oneByOne(6, issue);
      expect(accepted.map((r) => r.status)).toEqual(Array(6).fill(200));
      // Both workers now serve the client from their caches.
      expect(new Set(await answeredBy(accepted)).size).toBe(2);
      expect((await admin.delete(`/api/agents/${agent}/client-credentials`)).status).toBe(204);
      // The write's NOTIFY reaches the other worker well before the cache's 5 s backstop.
      const deadline = Date.now() + 4_000;
      const refusedBy = new Set<number>();
      while (refusedBy.size < 2 && Date.now() < deadline) {
        const response = await issue();
        if (response.status === 401) refusedBy.add(await broker.answeredBy(response));
      }
      expect(refusedBy.size).toBe(2);
      const after = await oneByOne(6, issue);
      expect(after.map((r) => r.status)).toEqual(Array(6).fill(401));
    });

    /** A pending approval requested by the agent for Alice; its id. */
    const requestApproval = async (): Promise<string> => {
      const created = await http(`${base}/api/approvals`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await issuer.sign({ sub: ALICE, azp: agent }, { audience: 'gateway' })}`,
          'x-client-assertion': await assertion(),
        },
        body: JSON.stringify({ metadata: {}, tool_name: 'deploy', arguments: { env: 'prod' } }),
      });
      expect(created.status, created.text).toBe(201);
      return created.json<{ data: { id: string } }>().data.id;
    };

    /** Long-polls held now, summed over the workers by the aggregated `/metrics`. */
    const held = async (): Promise<number> => {
      const text = (await http(`${adminUrl}/metrics`)).text;
      return Number(/^broker_approval_waiters (\d+)$/m.exec(text)?.[1] ?? NaN);
    };
    const holding = (count: number) =>
      eventually(held, (now) => now === count, { waitingFor: `the workers holding ${count} long-poll(s)` });

    it('wakes long-polls held by both workers when an approval is decided through one of them', async () => {
      const id = await requestApproval();
      const before = await sync();
      let answered = 0;
      const waiters: Promise<HttpResponse>[] = [];
      for (let i = 0; i < 4; i += 1) {
        waiters.push(
          sync({ 'if-none-match': before.headers.etag as string, 'x-long-poll-timeout': '60' }).finally(() => {
            answered += 1;
          }),
        );
        // One at a time: each is held before the next connection is made, so the cluster spreads them.
        await holding(i + 1);
      }
      // The waiters are held, and none has answered.
      expect(answered).toBe(0);
      const approved = await new ApiClient(base, ALICE).post(`/api/approvals/${id}/approve`, { persistence: 'once' });
      expect(approved.status).toBe(200);
      const woken = await Promise.all(waiters);
      for (const response of woken) {
        expect(response.status).toBe(200);
        expect(
          response.json<{ data: { pairs: { approvals: { id: string; status: string }[] }[] } }>().data.pairs[0]
            ?.approvals,
        ).toEqual([expect.objectContaining({ id, status: 'approved' })]);
      }
      // Waiters were held on both workers, so those on the worker the decision did not go through were woken across processes.
      const waiterPids = new Set(await answeredBy(woken));
      expect(waiterPids.size).toBe(2);
      expect(waiterPids.has(await broker.answeredBy(approved))).toBe(true);
    });

    it('refreshes an expired third-party token once for 20 concurrent exchanges spread over both workers', async () => {
      const database = new Client({ connectionString: databaseUrl });
      await database.connect();
      try {
        await database.query("UPDATE third_party_sessions SET access_token_expires_at = now() - interval '1 minute'");
        // The workers keep sessions in memory until this write's NOTIFY reaches them: a marker sent after it,
        // heard here, was delivered after it to every listener (docs/oauth2.md "The hot path").
        await database.query('LISTEN exchange_changed');
        const marker = `settle-${randomUUID()}`;
        const heard = new Promise<void>((resolve) =>
          database.on('notification', (message) => message.payload === marker && resolve()),
        );
        await database.query('SELECT pg_notify($1, $2)', ['exchange_changed', marker]);
        await heard;
      } finally {
        await database.end();
      }
      const exchange = async (): Promise<HttpResponse> => {
        const fields = {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await assertion(),
          subject_token: await issuer.sign({ sub: ALICE, azp: agent }, { audience: 'gateway' }),
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          resource: 'https://mail.example.com',
        };
        return http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields).toString(),
        });
      };
      const refreshes = provider.refreshes();
      const responses = await Promise.all(Array.from({ length: 20 }, exchange));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(new Set(await answeredBy(responses)).size).toBe(2);
      expect(new Set(responses.map((r) => r.json<{ access_token: string }>().access_token)).size).toBe(1);
      expect(provider.refreshes()).toBe(refreshes + 1);
      expect(provider.refusedRefreshes()).toBe(0);
    });

    it('aggregates /metrics over both workers: counters summed, a database count reported once', async () => {
      const scrape = async (): Promise<string[]> => {
        const response = await http(`${adminUrl}/metrics`);
        expect(response.status).toBe(200);
        return response.text.split('\n');
      };
      /** `broker_http_request_duration_seconds_count` of GET /health on the end-user server, 2xx. */
      const healthCount = (lines: string[]): number => {
        const line = lines.find(
          (l) =>
            l.startsWith('broker_http_request_duration_seconds_count{') &&
            ['server="enduser"', 'route="/health"', 'method="GET"', 'status_class="2xx"'].every((label) =>
              l.includes(label),
            ),
        );
        return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      // One pending approval before the first scrape: each worker reads the count (1) from the database.
      await requestApproval();
      const before = healthCount(await scrape());
      const responses = await oneByOne(10, () => http(`${base}/health`));
      expect(new Set(await answeredBy(responses)).size).toBe(2);
      const after = await scrape();
      expect(healthCount(after)).toBe(before + 10);
      expect(after).toContain('broker_approvals_pending 1');
    });

    it('replaces a worker killed with SIGKILL: one warn line with the restart delay, a new worker, service continues', async () => {
      const started = () => broker.records().filter((r) => r.msg === 'worker started');
      const [victim, survivor] = started().map((r) => r.pid as number);
      process.kill(victim as number, 'SIGKILL');
      const died = await broker.waitFor(
        (r) => r.msg === 'worker exited unexpectedly: restarting it' && r.worker_pid === victim,
      );
      expect(died).toMatchObject({ level: 'warn', signal: 'SIGKILL', restart_in_ms: 1_000 });
      const replacement = (
        await broker.waitFor((r) => r.msg === 'worker started' && r.pid !== victim && r.pid !== survivor)
      ).pid as number;
      const responses = await oneByOne(6, () => http(`${base}/health`));
      expect(responses.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(new Set(await answeredBy(responses))).toEqual(new Set([survivor, replacement]));
      // The replacement joined the metrics collection: the aggregated scrape still answers.
      expect((await http(`${adminUrl}/metrics`)).status).toBe(200);
    });

    it('SIGTERM to the primary: a held long-poll is answered, every worker drains, exit code 0', async () => {
      const current = await sync();
      const waiting = sync({ 'if-none-match': current.headers.etag as string, 'x-long-poll-timeout': '120' });
      await holding(1);
      broker.signal('SIGTERM');
      const response = await waiting;
      expect(response.status).toBe(304);
      expect((await broker.exited).code).toBe(0);
      const live = new Set(
        broker
          .records()
          .filter((r) => r.msg === 'worker started')
          .map((r) => r.pid),
      );
      live.delete(broker.records().find((r) => r.msg === 'worker exited unexpectedly: restarting it')?.worker_pid);
      expect(
        new Set(
          broker
            .records()
            .filter((r) => r.msg === 'shutdown complete')
            .map((r) => r.pid),
        ),
      ).toEqual(live);
      expect(broker.stdout.join('\n')).not.toContain('did not stop within the shutdown timeout');
    });
  });
});
