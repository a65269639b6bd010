import { fork, type ChildProcess } from 'node:child_process';
import {
  ApiClient,
  createPostgresDatabase,
  freePort,
  postgresServerUrl,
  startTestBroker,
  testKey,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, registerMailService } from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';

function replica(
  config: Record<string, unknown>,
): Promise<{ child: ChildProcess; run: (serviceId: string, count: number) => Promise<string[]> }> {
  const child = fork('test/support/vault-replica.mjs', [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`replica exited early (${code})`)));
    child.once('message', () =>
      resolve({
        child,
        run: (serviceId, count) =>
          new Promise((done) => {
            child.once('message', (message: { tokens: string[] }) => done(message.tokens));
            child.send({ principal: ALICE, serviceId, count });
          }),
      }),
    );
    child.send({ config });
  });
}

describe.runIf(postgresServerUrl())('refresh single-flight across broker processes on one PostgreSQL', () => {
  let broker: TestBroker;
  let provider: ThirdPartyProvider;
  let config: Record<string, unknown>;
  let serviceId: string;

  beforeAll(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: {
        jwe_keys: [{ id: 'jwe-1', key: testKey() }],
        discovery: { allowed_networks: ['127.0.0.0/8'] },
      },
    };
    config = {
      ...keys,
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
      server: { enduser: { port, public_url: publicUrl }, admin: { port: 0 } },
    };
    broker = await startTestBroker({ servers: BOTH_SERVERS, config });
    ({ provider, service: serviceId } = await registerMailService(new ApiClient(broker.url('admin')), publicUrl));
    await connectThirdParty(publicUrl, ALICE, serviceId);
  });

  afterAll(async () => {
    await broker?.stop();
    await provider?.stop();
  });

  it('50 concurrent getUsableToken calls in two processes on an expired token: one refresh, one new token for all', async () => {
    await broker.broker.runtime.database.dataSource.query(
      "UPDATE third_party_sessions SET access_token_expires_at = now() - interval '1 minute'",
    );
    // Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
    await broker.broker.runtime.database.settleNotifications();
    const replicaConfig = { ...config, server: { enduser: { port: 0 }, admin: { port: 0 } } };
    const replicas = await Promise.all([replica(replicaConfig), replica(replicaConfig)]);
    const before = provider.refreshes();
    const results = await Promise.all(replicas.map((r) => r.run(serviceId, 25)));
    const tokens = results.flat();
    expect(tokens).toHaveLength(50);
    expect(tokens.filter((t) => t.startsWith('error:'))).toEqual([]);
    expect(new Set(tokens).size).toBe(1);
    expect(provider.refreshes()).toBe(before + 1);
    expect(provider.refusedRefreshes()).toBe(0);
    await Promise.all(
      replicas.map(
        (r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(null) : r.child.once('exit', resolve))),
      ),
    );
  });
});
