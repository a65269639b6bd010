import { Client } from 'pg';
import { createPostgresDatabase, http, postgresServerUrl, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBED_SERVERS } from '../support/probe.module';

async function waitForHealth(
  url: string,
  status: string,
  timeoutMs = 15_000,
): Promise<{ code: number; body: Record<string, unknown> }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await http(`${url}/health`);
    const body = response.json();
    if (body.status === status) return { code: response.status, body };
    if (Date.now() > deadline) throw new Error(`health stayed ${String(body.status)}, expected ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('GET /health', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: PROBED_SERVERS });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers 200 healthy with timestamp and integer uptime on both servers, without a principal', async () => {
    for (const kind of ['enduser', 'admin'] as const) {
      const response = await http(`${broker.url(kind)}/health`);
      expect(response.status).toBe(200);
      const body = response.json<{ status: string; timestamp: string; uptime_seconds: number }>();
      expect(Object.keys(body)).toEqual(['status', 'timestamp', 'uptime_seconds']);
      expect(body.status).toBe('healthy');
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
      expect(Number.isInteger(body.uptime_seconds)).toBe(true);
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });
});

describe.runIf(postgresServerUrl())('GET /health with PostgreSQL going away and coming back', () => {
  let broker: TestBroker;
  let admin: Client;
  let databaseName: string;

  beforeAll(async () => {
    const url = await createPostgresDatabase();
    databaseName = new URL(url).pathname.slice(1);
    broker = await startTestBroker({
      servers: PROBED_SERVERS,
      config: { storage: { backend: 'postgres', postgres: { connection_url: url } } },
    });
    admin = new Client({ connectionString: postgresServerUrl() });
    await admin.connect();
  });

  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS true`);
    await admin.end();
    await broker.stop();
  });

  it('turns unhealthy (503) while the database is unreachable and recovers by itself', async () => {
    const url = broker.url('enduser');
    expect((await http(`${url}/health`)).status).toBe(200);

    await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [databaseName]);
    const down = await waitForHealth(url, 'unhealthy');
    expect(down.code).toBe(503);
    expect(broker.logs.text).toContain('database check failed: reporting unhealthy');

    await admin.query(`ALTER DATABASE ${databaseName} ALLOW_CONNECTIONS true`);
    const up = await waitForHealth(url, 'healthy');
    expect(up.code).toBe(200);
    expect((await http(`${broker.url('admin')}/health`)).status).toBe(200);
  });
});
