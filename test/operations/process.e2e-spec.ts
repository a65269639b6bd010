import { createServer, type AddressInfo, type Server } from 'node:net';
import { connect } from 'node:net';
import { join } from 'node:path';
import {
  BrokerProcess,
  createPostgresDatabase,
  http,
  pgliteStorage,
  postgresServerUrl,
  writeConfigFile,
} from '@broker/testing';
import { describe, expect, it } from 'vitest';

/**
 * A config on ephemeral ports with its data (PGlite files, development keys) under `dir`. The PGlite
 * directory starts empty (the process migrates it, as on a first `npm start`) only with `emptyDatabase`;
 * otherwise it is seeded from the run's migrated dump (`storage.pglite.initial_data`), since migrating an
 * empty embedded database takes the process tens of seconds and the other tests are not about migrations.
 */
function processConfig(extra: Record<string, unknown> = {}, emptyDatabase = false): { file: string; dir: string } {
  const { dir } = writeConfigFile({});
  return writeConfigFile({
    server: { enduser: { port: 0 }, admin: { port: 0 }, shutdown: { timeout: '10s' } },
    storage: { pglite: pgliteStorage(join(dir, 'pglite'), { empty: emptyDatabase }) },
    development: { keys_file: join(dir, 'development-keys.json') },
    ...extra,
  });
}

describe('the broker process', () => {
  it('stops with exit code 2 and one line naming the key on a config error', async () => {
    const { file } = writeConfigFile({ oauth2_authorization_server: { mode: 'lokal' } });
    const broker = new BrokerProcess('broker', ['--config', file]);
    const { code } = await broker.exited;
    expect(code).toBe(2);
    expect(broker.stderr.join('')).toBe(
      'config error: oauth2_authorization_server.mode must be one of local, proxy, hybrid (got "lokal")\n',
    );
  });

  it('runs both servers on the embedded database, keeps data across a restart, and exits 0 on Ctrl-C', async () => {
    const { file } = processConfig({}, true);
    const first = new BrokerProcess('broker', ['--config', file]);
    const urls = await first.listening(['enduser', 'admin']);
    for (const url of Object.values(urls)) {
      const health = await http(`${url}/health`);
      expect(health.status).toBe(200);
      expect(health.json<{ status: string }>().status).toBe('healthy');
    }
    const installation = (await first.waitFor((r) => r.msg === 'database ready')).installation_id;
    expect(first.records().some((r) => String(r.msg).includes('DEVELOPMENT KEYS IN USE'))).toBe(true);
    first.signal('SIGINT');
    expect((await first.exited).code).toBe(0);

    const second = new BrokerProcess('broker', ['--config', file]);
    await second.listening(['enduser', 'admin']);
    expect((await second.waitFor((r) => r.msg === 'database ready')).installation_id).toBe(installation);
    // Migrations were applied once, by the first start.
    expect(second.records().some((r) => String(r.msg).startsWith('applied'))).toBe(false);
    second.signal('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });

  it('stops both servers with a clear message and a non-zero exit when one cannot bind', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const { file } = processConfig({ server: { enduser: { port: 0 }, admin: { port: taken } } });
      const broker = new BrokerProcess('broker', ['--config', file]);
      const { code } = await broker.exited;
      expect(code).toBe(1);
      expect(broker.stderr.join('')).toBe(
        `cannot start the admin server: 127.0.0.1:${taken} is already in use (stop the other process or change server.admin.port)\n`,
      );
      // The end-user server that did bind was closed again.
      const enduser = broker
        .records()
        .find((r) => r.server === 'enduser' && String(r.msg).endsWith('server listening'));
      if (enduser !== undefined) await expect(http(`${String(enduser.url)}/health`)).rejects.toThrow();
    } finally {
      blocker.close();
    }
  });

  it('shuts down gracefully: an in-flight request completes, a new one gets 503, then exit 0', async () => {
    const { file } = processConfig();
    const broker = new BrokerProcess('broker', ['--config', file]);
    const urls = await broker.listening(['enduser', 'admin']);
    const enduser = new URL(urls.enduser as string);

    // A request whose body arrives slowly is in flight from its headers on.
    const socket = connect(Number(enduser.port), enduser.hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ name: 'slow' });
    socket.write(
      `POST /api/slow HTTP/1.1\r\nHost: ${enduser.host}\r\nX-Remote-User: alice\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.slice(0, 3));
    const slowResponse = new Promise<string>((resolve) => {
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      socket.once('end', () => resolve(text));
      socket.once('close', () => resolve(text));
    });
    await new Promise((resolve) => setTimeout(resolve, 200));

    broker.signal('SIGTERM');
    await broker.waitFor((r) => String(r.msg).startsWith('shutting down'));
    expect((await broker.waitFor((r) => String(r.msg).startsWith('shutting down'))).in_flight).toBe(1);

    const rejected = await http(`${urls.enduser as string}/api/anything`, { headers: { 'x-remote-user': 'bob' } });
    expect(rejected.status).toBe(503);
    expect(rejected.json()).toEqual({ error: 'service unavailable', message: 'the server is shutting down' });
    const health = await http(`${urls.admin as string}/health`);
    expect(health.status).toBe(503);
    expect(health.json<{ status: string }>().status).toBe('shutting_down');

    socket.end(body.slice(3));
    const response = await slowResponse;
    // The in-flight request was served normally (no route there: 404), not refused.
    expect(response).toMatch(/^HTTP\/1\.1 404 /);
    expect(response).toContain('"error":"not_found"');
    expect((await broker.exited).code).toBe(0);
  });
});

describe.runIf(postgresServerUrl())('the standalone servers on one PostgreSQL', () => {
  it('start at the same time, migrate once between them, and both answer healthy', async () => {
    const url = await createPostgresDatabase(undefined, { empty: true });
    const { file } = processConfig({ storage: { backend: 'postgres', postgres: { connection_url: url } } });
    const userApi = new BrokerProcess('user-api', ['--config', file]);
    const adminApi = new BrokerProcess('admin-api', ['--config', file]);
    try {
      const [userUrls, adminUrls] = await Promise.all([userApi.listening(['enduser']), adminApi.listening(['admin'])]);
      expect((await http(`${userUrls.enduser as string}/health`)).status).toBe(200);
      expect((await http(`${adminUrls.admin as string}/health`)).status).toBe(200);
      // Each process runs only its own server.
      expect(userApi.records().some((r) => r.server === 'admin' && String(r.msg).endsWith('server listening'))).toBe(
        false,
      );
      expect(adminApi.records().some((r) => r.server === 'enduser' && String(r.msg).endsWith('server listening'))).toBe(
        false,
      );
      // Same database: one installation, migrations applied by exactly one of them.
      const [a, b] = await Promise.all([
        userApi.waitFor((r) => r.msg === 'database ready'),
        adminApi.waitFor((r) => r.msg === 'database ready'),
      ]);
      expect(a.installation_id).toBe(b.installation_id);
      const appliedBy = [userApi, adminApi].filter((p) => p.records().some((r) => String(r.msg).startsWith('applied')));
      expect(appliedBy).toHaveLength(1);
    } finally {
      userApi.signal('SIGTERM');
      adminApi.signal('SIGTERM');
      expect((await userApi.exited).code).toBe(0);
      expect((await adminApi.exited).code).toBe(0);
    }
  });
});
