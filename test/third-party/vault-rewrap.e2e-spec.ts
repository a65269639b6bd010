import { spawn } from 'node:child_process';
import { EnvelopeStore, ServiceRepository, SessionRepository } from '@broker/persistence';
import { SigningKeyService } from '@broker/oauth-server';
import {
  ApiClient,
  createPostgresDatabase,
  postgresServerUrl,
  startTestBroker,
  testBackends,
  testConfig,
  testKey,
  writeConfigFile,
  type TestBroker,
} from '@broker/testing';
import { bindings, EnvelopeCipher, rewrapAll, TokenVault, type RewrapProgress } from '@broker/vault';
import { describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const KEK_OLD = { id: 'kek-2025', key: testKey() };
const KEK_NEW = { id: 'kek-2026', key: testKey() };
const JWE = { jwe_keys: [{ id: 'jwe-1', key: testKey() }] };

/** Seeds sealed values of every kind through the real code paths; returns the service id and the webhook's id and secret. */
async function seed(
  broker: TestBroker,
  sessions: number,
): Promise<{ serviceId: string; webhook: { id: string; secret: string } }> {
  const admin = new ApiClient(broker.url('admin'));
  const serviceId = (
    await admin.post('/api/services', {
      display_name: 'S',
      client_id: 'c',
      client_secret: 'service-secret-under-old-kek',
      issuer_uri: 'https://i.example.com',
      authorization_endpoint: 'https://i.example.com/a',
      token_endpoint: 'https://i.example.com/t',
      protected_resources: [`https://${Math.random().toString(36).slice(2)}.example.com`],
    })
  ).json<{ id: string }>().id;
  await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'EdDSA' });
  const webhook = (
    await admin.post('/api/webhooks', {
      url: 'https://hooks.example.com/broker',
      event_types: ['grant.created'],
      enabled: true,
    })
  ).json<{ id: string; secret: string }>();
  const vault = broker.broker.server('enduser').app.get(TokenVault);
  for (let i = 0; i < sessions; i += 1) {
    await vault.store(`user-${i}@example.com`, serviceId, {
      accessToken: `access-${i}`,
      tokenType: 'Bearer',
      refreshToken: `refresh-${i}`,
      expiresIn: 3600,
      refreshTokenExpiresIn: undefined,
      scopes: ['read'],
    });
  }
  return { serviceId, webhook };
}

/** Opens every sealed value with a cipher that knows only the new KEK. */
async function assertAllReadableWithNewKekOnly(
  broker: TestBroker,
  { serviceId, webhook }: Awaited<ReturnType<typeof seed>>,
  sessions: number,
): Promise<void> {
  const onlyNew = new EnvelopeCipher(testConfig({ encryption: { keys: [KEK_NEW], current_key_id: KEK_NEW.id } }));
  const app = broker.broker.server('enduser').app;
  expect(
    onlyNew
      .decrypt(
        (await app.get(ServiceRepository).findSecretEnvelope(serviceId)) as Buffer,
        bindings.clientSecret(serviceId),
      )
      .toString(),
  ).toBe('service-secret-under-old-kek');
  const keys = await broker.broker.runtime.database.dataSource.query<{ kid: string; private_key_envelope: Buffer }[]>(
    'SELECT kid, private_key_envelope FROM signing_keys',
  );
  for (const key of keys)
    expect(onlyNew.decrypt(key.private_key_envelope, bindings.signingKey(key.kid)).length).toBeGreaterThan(0);
  const [hook] = await broker.broker.runtime.database.dataSource.query<{ secret_envelope: Buffer }[]>(
    'SELECT secret_envelope FROM webhooks WHERE id = $1',
    [webhook.id],
  );
  expect(`whsec_${onlyNew.decrypt(hook!.secret_envelope, bindings.webhookSecret(webhook.id)).toString('base64')}`).toBe(
    webhook.secret,
  );
  for (let i = 0; i < sessions; i += 1) {
    const principal = `user-${i}@example.com`;
    const session = (await app.get(SessionRepository).find(principal, serviceId))!;
    expect(
      onlyNew
        .decrypt(session.accessTokenEnvelope, bindings.sessionToken(serviceId, principal, 'access_token'))
        .toString(),
    ).toBe(`access-${i}`);
    expect(
      onlyNew
        .decrypt(session.refreshTokenEnvelope as Buffer, bindings.sessionToken(serviceId, principal, 'refresh_token'))
        .toString(),
    ).toBe(`refresh-${i}`);
  }
}

describe.each(testBackends())('KEK rotation with rewrap on $name', (backend) => {
  it('rewraps every data key under the new KEK (idempotently), after which the old KEK can be removed', async () => {
    const storage = await backend.storage();
    const old = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { storage, encryption: { keys: [KEK_OLD], current_key_id: KEK_OLD.id }, third_party_oauth2: JWE },
    });
    const seeded = await seed(old, 25);
    // The new KEK becomes current; the old one stays for reading until the rewrap is done.
    const rotated = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        storage,
        encryption: { keys: [KEK_OLD, KEK_NEW], current_key_id: KEK_NEW.id },
        third_party_oauth2: JWE,
      },
    });
    try {
      await old.stop();
      const cipher = rotated.broker.server('enduser').app.get(EnvelopeCipher);
      const store = rotated.broker.server('enduser').app.get(EnvelopeStore);
      const reports: RewrapProgress[] = [];
      const totals = await rewrapAll(store, cipher, (p) => reports.push(p), 10);
      expect(Object.fromEntries(totals.map((t) => [t.column, t.rewrapped]))).toEqual({
        'services.client_secret_envelope': 1,
        'signing_keys.private_key_envelope': 2,
        'third_party_sessions.access_token_envelope': 25,
        'third_party_sessions.refresh_token_envelope': 25,
        'webhooks.secret_envelope': 1,
      });
      // Progress is reported per batch.
      expect(
        reports.filter((r) => r.column === 'third_party_sessions.access_token_envelope').map((r) => r.scanned),
      ).toEqual([10, 20, 25]);
      // Idempotent: a second run finds nothing to do.
      expect((await rewrapAll(store, cipher, () => undefined)).every((t) => t.rewrapped === 0)).toBe(true);
      await assertAllReadableWithNewKekOnly(rotated, seeded, 25);
      // The running broker still signs with its (rewrapped) key.
      expect(await rotated.broker.server('enduser').app.get(SigningKeyService).currentKey()).toBeDefined();
    } finally {
      await rotated.stop();
    }
  });
});

describe.runIf(postgresServerUrl())('npm run vault:rewrap', () => {
  it('rewraps online, next to a running broker, and reports progress', async () => {
    const url = await createPostgresDatabase();
    const storage = { backend: 'postgres', postgres: { connection_url: url } };
    const old = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { storage, encryption: { keys: [KEK_OLD], current_key_id: KEK_OLD.id }, third_party_oauth2: JWE },
    });
    const seeded = await seed(old, 3);
    await old.stop();
    const rotatedConfig = {
      storage,
      encryption: { keys: [KEK_OLD, KEK_NEW], current_key_id: KEK_NEW.id },
      third_party_oauth2: JWE,
      server: { enduser: { port: 0 }, admin: { port: 0 } },
    };
    const running = await startTestBroker({ servers: BOTH_SERVERS, config: rotatedConfig });
    try {
      const { file } = writeConfigFile(
        JSON.parse(
          JSON.stringify({
            ...rotatedConfig,
            encryption: {
              keys: [
                { id: KEK_OLD.id, key: KEK_OLD.key },
                { id: KEK_NEW.id, key: KEK_NEW.key },
              ],
              current_key_id: KEK_NEW.id,
            },
          }),
        ) as Record<string, unknown>,
      );
      const child = spawn(process.execPath, ['dist/libs/vault/src/rewrap-cli.js', '--config', file], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(0);
      expect(output).toContain('third_party_sessions.refresh_token_envelope: 3 scanned, 3 rewrapped');
      expect(output).toContain('webhooks.secret_envelope: 1 scanned, 1 rewrapped');
      expect(output).toContain('done: 10 data keys rewrapped');
      await assertAllReadableWithNewKekOnly(running, seeded, 3);
    } finally {
      await running.stop();
    }
  });
});
