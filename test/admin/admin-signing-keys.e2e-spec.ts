import { SigningKeyService } from '@broker/oauth-server';
import { ApiClient, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

interface KeyView {
  kid: string;
  algorithm: string;
  is_current: boolean;
  created_at: string;
  deleted_at: string | null;
}

describe('admin: signing keys', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  let keys: SigningKeyService;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    admin = new ApiClient(broker.url('admin'));
    // The JWKS and token signing on the end-user server read keys through this service.
    keys = broker.broker.server('enduser').app.get(SigningKeyService);
  });

  afterAll(async () => {
    await broker.stop();
  });

  const list = async (): Promise<KeyView[]> =>
    (await admin.get('/api/oauth2-server/signing-keys')).json<{ items: KeyView[] }>().items;

  it('creates a first ES256 key at start-up in local mode, current, and lists {items}', async () => {
    const response = await admin.get('/api/oauth2-server/signing-keys');
    expect(response.status).toBe(200);
    const body = response.json<{ items: KeyView[] }>();
    expect(Object.keys(body)).toEqual(['items']);
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({ algorithm: 'ES256', is_current: true, deleted_at: null });
    expect(Object.keys(body.items[0] as KeyView).sort()).toEqual([
      'algorithm',
      'created_at',
      'deleted_at',
      'is_current',
      'kid',
    ]);
  });

  it('adds keys (201, not current), publishes them in the JWKS at once, newest first', async () => {
    const before = (await keys.jwks()).keys.length;
    const added = [];
    for (const algorithm of ['RS256', 'EdDSA', undefined]) {
      const response = await admin.post('/api/oauth2-server/signing-keys', algorithm ? { algorithm } : {});
      expect(response.status).toBe(201);
      added.push(response.json<KeyView>());
    }
    expect(added.map((k) => [k.algorithm, k.is_current])).toEqual([
      ['RS256', false],
      ['EdDSA', false],
      ['ES256', false],
    ]);
    const jwks = await keys.jwks();
    expect(jwks.keys).toHaveLength(before + 3);
    for (const key of added) expect(jwks.keys.map((k) => k.kid)).toContain(key.kid);
    for (const jwk of jwks.keys) {
      expect(jwk).not.toHaveProperty('d');
      expect(jwk).not.toHaveProperty('p');
      expect(jwk.use).toBe('sig');
    }
    const listed = await list();
    expect(listed.map((k) => k.kid).slice(0, 3)).toEqual(added.map((k) => k.kid).reverse());
  });

  it('rejects an unknown algorithm with 400 validation failed', async () => {
    const response = await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'HS256' });
    expect(response.status).toBe(400);
    expect(response.json<{ error: string }>().error).toBe('validation failed');
  });

  it('rejects a null algorithm with 400 validation failed (omitted is the ES256 default, null is not)', async () => {
    const response = await admin.post('/api/oauth2-server/signing-keys', { algorithm: null });
    expect(response.status).toBe(400);
    expect(response.json<{ error: string; message: string }>()).toMatchObject({
      error: 'validation failed',
      message: expect.stringContaining('algorithm') as unknown,
    });
  });

  it('promotes a key (200): it becomes the one current key and the signing key', async () => {
    const target = (await list()).find((k) => k.algorithm === 'RS256') as KeyView;
    const response = await admin.put(`/api/oauth2-server/signing-keys/${target.kid}/current`);
    expect(response.status).toBe(200);
    expect(response.json()).toMatchObject({ kid: target.kid, is_current: true });
    expect((await list()).filter((k) => k.is_current).map((k) => k.kid)).toEqual([target.kid]);
    const current = await keys.currentKey();
    expect(current).toMatchObject({ kid: target.kid, algorithm: 'RS256' });
    expect(current?.privateKey.asymmetricKeyType).toBe('rsa');
  });

  it('refuses to delete the current key (409 current_key)', async () => {
    const current = (await list()).find((k) => k.is_current) as KeyView;
    const response = await admin.delete(`/api/oauth2-server/signing-keys/${current.kid}`);
    expect(response.status).toBe(409);
    expect(response.json()).toEqual({
      error: 'current_key',
      message: 'the current signing key cannot be deleted: promote another key first',
    });
  });

  it('soft-deletes other keys (204): still listed with deleted_at, gone from the JWKS, cannot be promoted', async () => {
    const victim = (await list()).find((k) => k.algorithm === 'EdDSA') as KeyView;
    expect((await admin.delete(`/api/oauth2-server/signing-keys/${victim.kid}`)).status).toBe(204);
    const after = (await list()).find((k) => k.kid === victim.kid) as KeyView;
    expect(after.deleted_at).not.toBeNull();
    expect((await keys.jwks()).keys.map((k) => k.kid)).not.toContain(victim.kid);
    expect((await admin.put(`/api/oauth2-server/signing-keys/${victim.kid}/current`)).status).toBe(404);
    expect((await admin.delete(`/api/oauth2-server/signing-keys/${victim.kid}`)).json<{ error: string }>().error).toBe(
      'signing key not found',
    );
  });

  it('refuses to delete the last key (409 last_key)', async () => {
    for (const key of (await list()).filter((k) => k.deleted_at === null && !k.is_current)) {
      expect((await admin.delete(`/api/oauth2-server/signing-keys/${key.kid}`)).status).toBe(204);
    }
    const last = (await list()).filter((k) => k.deleted_at === null);
    expect(last).toHaveLength(1);
    const response = await admin.delete(`/api/oauth2-server/signing-keys/${(last[0] as KeyView).kid}`);
    expect(response.status).toBe(409);
    expect(response.json()).toEqual({
      error: 'last_key',
      message: 'the last signing key cannot be deleted: add another key first',
    });
  });

  it('answers 404 signing key not found for an unknown kid', async () => {
    expect((await admin.put('/api/oauth2-server/signing-keys/no-such-kid/current', {})).status).toBe(404);
    const response = await admin.delete('/api/oauth2-server/signing-keys/no-such-kid');
    expect(response.status).toBe(404);
    expect(response.json()).toEqual({ error: 'signing key not found', message: 'no signing key no-such-kid' });
  });
});

describe.each(testBackends())('admin: concurrent signing-key deletes on $name', (backend) => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { storage: await backend.storage() } });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('never deletes the last key when two deletes of the only two live keys race', async () => {
    const admin = new ApiClient(broker.url('admin'));
    const listKeys = async (): Promise<KeyView[]> =>
      (await admin.get('/api/oauth2-server/signing-keys'))
        .json<{ items: KeyView[] }>()
        .items.filter((k) => k.deleted_at === null);
    for (let round = 0; round < 3; round += 1) {
      const second = (await admin.post('/api/oauth2-server/signing-keys', {})).json<KeyView>();
      // Promote the new key, then race deletes of both live keys: at most one may succeed.
      await admin.put(`/api/oauth2-server/signing-keys/${second.kid}/current`);
      const live = await listKeys();
      expect(live).toHaveLength(2);
      const responses = await Promise.all(live.map((k) => admin.delete(`/api/oauth2-server/signing-keys/${k.kid}`)));
      expect(responses.filter((r) => r.status === 204)).toHaveLength(1);
      expect(await listKeys()).toHaveLength(1);
    }
  });

  it('creates exactly one first key when two brokers start at once on one empty database', async () => {
    const storage = await backend.storage();
    const brokers = await Promise.all([
      startTestBroker({ servers: BOTH_SERVERS, config: { storage } }),
      startTestBroker({ servers: BOTH_SERVERS, config: { storage } }),
    ]);
    try {
      const rows = await brokers[0].broker.runtime.database.dataSource.query<{ is_current: boolean }[]>(
        'SELECT is_current FROM signing_keys',
      );
      expect(rows).toEqual([{ is_current: true }]);
    } finally {
      await Promise.all(brokers.map((b) => b.stop()));
    }
  });
});

describe('admin: signing keys in proxy mode', () => {
  it('creates no key at start-up (the upstream signs), but keys can still be managed', async () => {
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        oauth2_authorization_server: {
          mode: 'proxy',
          proxy: {
            upstream_authorize_endpoint: 'https://idp.example.com/authorize',
            upstream_token_endpoint: 'https://idp.example.com/token',
            upstream_jwks_uri: 'https://idp.example.com/jwks',
          },
        },
      },
    });
    try {
      const admin = new ApiClient(broker.url('admin'));
      expect((await admin.get('/api/oauth2-server/signing-keys')).json()).toEqual({ items: [] });
      expect(await broker.broker.server('enduser').app.get(SigningKeyService).currentKey()).toBeUndefined();
    } finally {
      await broker.stop();
    }
  });
});
