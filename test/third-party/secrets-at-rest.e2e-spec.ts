import { createPrivateKey } from 'node:crypto';
import { ServiceRepository, type Database } from '@broker/persistence';
import { ApiClient, startTestBroker, testBackends, testKey, type TestBroker } from '@broker/testing';
import { bindings, EnvelopeCipher, VaultError } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const KEK_A = { id: 'kek-a', key: testKey() };
const KEK_B = { id: 'kek-b', key: testKey() };

function serviceBody(name: string, secret: string): Record<string, unknown> {
  return {
    display_name: name,
    client_id: name,
    client_secret: secret,
    issuer_uri: 'https://idp.example.com',
    authorization_endpoint: 'https://idp.example.com/authorize',
    token_endpoint: 'https://idp.example.com/token',
    protected_resources: [`https://${name}.example.com`],
  };
}

/** Every row of every table of the broker's schema, as text (bytea as hex, as a dump would show it). */
async function dumpDatabase(database: Database): Promise<string> {
  const tables = await database.dataSource.query<{ table_name: string }[]>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  );
  const parts: string[] = [];
  for (const { table_name: table } of tables) {
    const rows = await database.dataSource.query<{ row: string }[]>(
      `SELECT row_to_json(t)::text AS row FROM "${table}" t`,
    );
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/** The forms a leaked secret could take in a dump. */
function encodings(value: Buffer): string[] {
  return [value.toString('utf8'), value.toString('hex'), value.toString('base64'), value.toString('base64url')].filter(
    (v) => v.length >= 16,
  );
}

describe.each(testBackends())('secrets at rest on $name', (backend) => {
  let storage: Record<string, unknown>;
  let brokerA: TestBroker;
  let cipherA: EnvelopeCipher;

  beforeAll(async () => {
    storage = await backend.storage();
    brokerA = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { storage, encryption: { keys: [KEK_A], current_key_id: 'kek-a' } },
    });
    cipherA = brokerA.broker.server('admin').app.get(EnvelopeCipher);
  });

  afterAll(async () => {
    await brokerA.stop();
  });

  it('stores no plaintext client secret or private key anywhere in the database', async () => {
    const admin = new ApiClient(brokerA.url('admin'));
    const secret = 'plaintext-client-secret-6f1d2c9b';
    expect((await admin.post('/api/services', serviceBody('dumped', secret))).status).toBe(201);
    for (const algorithm of ['ES256', 'RS256', 'EdDSA'])
      expect((await admin.post('/api/oauth2-server/signing-keys', { algorithm })).status).toBe(201);

    const database = brokerA.broker.runtime.database;
    const dump = await dumpDatabase(database);
    expect(dump).toContain('dumped');
    const forbidden = encodings(Buffer.from(secret));
    const keys = await database.dataSource.query<{ kid: string; private_key_envelope: Buffer }[]>(
      'SELECT kid, private_key_envelope FROM signing_keys',
    );
    expect(keys.length).toBeGreaterThanOrEqual(4);
    for (const key of keys) {
      const der = cipherA.decrypt(key.private_key_envelope, `signing_key:${key.kid}:private_key`);
      const jwk = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
      forbidden.push(...encodings(der), jwk.d as string);
      if (jwk.p) forbidden.push(jwk.p, jwk.q as string);
    }
    expect(forbidden.filter((value) => dump.includes(value))).toEqual([]);
  });

  it("fails to decrypt a client secret whose ciphertext was swapped with another service's", async () => {
    const admin = new ApiClient(brokerA.url('admin'));
    const a = (await admin.post('/api/services', serviceBody('swap-a', 'secret-of-a-0123456789'))).json<{
      id: string;
    }>().id;
    const b = (await admin.post('/api/services', serviceBody('swap-b', 'secret-of-b-0123456789'))).json<{
      id: string;
    }>().id;
    const services = brokerA.broker.server('admin').app.get(ServiceRepository);
    const envelopeA = (await services.findSecretEnvelope(a)) as Buffer;
    const envelopeB = (await services.findSecretEnvelope(b)) as Buffer;
    expect(cipherA.decrypt(envelopeA, bindings.clientSecret(a)).toString()).toBe('secret-of-a-0123456789');

    const database = brokerA.broker.runtime.database;
    await database.dataSource.query('UPDATE services SET client_secret_envelope = $2 WHERE id = $1', [a, envelopeB]);
    await database.dataSource.query('UPDATE services SET client_secret_envelope = $2 WHERE id = $1', [b, envelopeA]);
    const swappedA = (await services.findSecretEnvelope(a)) as Buffer;
    expect(() => cipherA.decrypt(swappedA, bindings.clientSecret(a))).toThrow(VaultError);
    const swappedB = (await services.findSecretEnvelope(b)) as Buffer;
    expect(() => cipherA.decrypt(swappedB, bindings.clientSecret(b))).toThrow(/could not be decrypted/);
  });

  it('reads secrets sealed under an old KEK after current_key_id moves, and seals new ones under the new KEK', async () => {
    const admin = new ApiClient(brokerA.url('admin'));
    const old = (await admin.post('/api/services', serviceBody('rotated', 'sealed-under-kek-a-0001'))).json<{
      id: string;
    }>().id;

    // A broker configured with both KEKs, the new one current, on the same database.
    const brokerB = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { storage, encryption: { keys: [KEK_A, KEK_B], current_key_id: 'kek-b' } },
    });
    try {
      const cipherB = brokerB.broker.server('admin').app.get(EnvelopeCipher);
      const services = brokerB.broker.server('admin').app.get(ServiceRepository);
      const oldEnvelope = (await services.findSecretEnvelope(old)) as Buffer;
      expect(cipherB.kekIdOf(oldEnvelope)).toBe('kek-a');
      expect(cipherB.decrypt(oldEnvelope, bindings.clientSecret(old)).toString()).toBe('sealed-under-kek-a-0001');

      const fresh = (
        await new ApiClient(brokerB.url('admin')).post('/api/services', serviceBody('fresh', 'sealed-under-kek-b-0002'))
      ).json<{ id: string }>().id;
      const freshEnvelope = (await services.findSecretEnvelope(fresh)) as Buffer;
      expect(cipherB.kekIdOf(freshEnvelope)).toBe('kek-b');
      expect(cipherB.decrypt(freshEnvelope, bindings.clientSecret(fresh)).toString()).toBe('sealed-under-kek-b-0002');
      // The old broker, without kek-b, cannot read it.
      expect(() => cipherA.decrypt(freshEnvelope, bindings.clientSecret(fresh))).toThrow(/"kek-b" is not configured/);
    } finally {
      await brokerB.stop();
    }
  });
});
