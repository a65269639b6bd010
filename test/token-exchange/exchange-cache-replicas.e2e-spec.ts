import {
  ApiClient,
  createPostgresDatabase,
  freePort,
  http,
  postgresServerUrl,
  startJwtIssuer,
  startTestBroker,
  testKey,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import { TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const RESOURCE = 'https://mail.example.com/api';

/**
 * The token exchange keeps what it read for a person (grant, delegations, session) in memory
 * on PostgreSQL, so a gateway's repeated exchange costs no database round trip. Two broker
 * replicas on one database: whatever one of them (or anyone) changes is refused by the
 * other from the next request on, with no polling and no waiting for a TTL: the write's
 * notification reaches every replica before the writer's answer reaches its caller.
 */
describe.runIf(postgresServerUrl())('the token exchange served from memory, across two replicas on PostgreSQL', () => {
  let issuer: TestJwtIssuer;
  let a: TestBroker;
  let b: TestBroker;
  let base: string;
  let bUrl: string;
  let agent: string;
  let service: string;
  let set: string;

  const exchangeOn = async (url: string): Promise<{ status: number; error?: string; dbQueries: unknown }> => {
    const form = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await issuer.sign({ sub: 'gateway-1' }, { audience: base, ttlSeconds: 3600 }),
      subject_token: await issuer.sign({ sub: ALICE, azp: agent }, { audience: base, ttlSeconds: 3600 }),
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: RESOURCE,
    });
    const response = await http(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const traceId = String(response.headers.traceresponse).split('-')[1];
    const broker = url === bUrl ? b : a;
    const line = broker.logs.records().find((r) => r.trace_id === traceId && r.route === '/oauth2/token');
    return {
      status: response.status,
      error: response.status === 200 ? undefined : response.json<{ error: string }>().error,
      dbQueries: line?.db_queries,
    };
  };
  const grant = () =>
    new ApiClient(base, ALICE).post(`/api/consent/agents/${agent}/grants`, {
      granted_permission_sets: { [set]: [service] },
    });
  const connect = () =>
    a.broker
      .server('enduser')
      .app.get(TokenVault)
      .store(ALICE, service, {
        accessToken: 'third-party-access-token-1234567890',
        tokenType: 'Bearer',
        refreshToken: undefined,
        expiresIn: 3600,
        refreshTokenExpiresIn: undefined,
        scopes: ['mail.read'],
      });
  /** B answers from memory: the second of two exchanges runs no statement. */
  const servedFromMemoryOnB = async (): Promise<void> => {
    expect((await exchangeOn(bUrl)).status).toBe(200);
    for (let i = 0; i < 50; i += 1) {
      // The first read may meet a notification of the writes just made and be read again once.
      const second = await exchangeOn(bUrl);
      expect(second.status).toBe(200);
      if (second.dbQueries === 0) return;
    }
    throw new Error('replica B never answered from memory');
  };

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    const storage = { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } };
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    };
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const start = (enduserPort: number) =>
      startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          ...keys,
          storage,
          server: { enduser: { port: enduserPort, public_url: base } },
          token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
        },
      });
    a = await start(port);
    const bPort = await freePort();
    b = await start(bPort);
    bUrl = `http://127.0.0.1:${bPort}`;
    const admin = new ApiClient(a.url('admin'));
    service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: [RESOURCE],
      })
    ).json<{ id: string }>().id;
    set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    agent = (
      await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    expect((await grant()).status).toBe(201);
    await connect();
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await issuer?.stop();
  });

  it('a grant revoked by the person on replica A is refused by replica B at the next request', async () => {
    await servedFromMemoryOnB();
    expect((await new ApiClient(base, ALICE).delete(`/api/consent/agents/${agent}/grants`)).status).toBe(204);
    expect(await exchangeOn(bUrl)).toMatchObject({ status: 403, error: 'access_denied' });
    // And on A itself, where the revocation was made.
    expect(await exchangeOn(base)).toMatchObject({ status: 403, error: 'access_denied' });
    expect((await grant()).status).toBe(201);
    expect((await exchangeOn(bUrl)).status).toBe(200);
  });

  it('a third-party account disconnected on replica A is refused by replica B at the next request', async () => {
    await servedFromMemoryOnB();
    expect((await new ApiClient(base, ALICE).delete(`/api/third-party/${service}/session`)).status).toBe(200);
    expect(await exchangeOn(bUrl)).toMatchObject({ status: 400, error: 'invalid_grant' });
    await connect();
    expect((await exchangeOn(bUrl)).status).toBe(200);
  });

  it('an agent deleted by an administrator on replica A is refused by replica B at the next request', async () => {
    await servedFromMemoryOnB();
    expect((await new ApiClient(a.url('admin')).delete(`/api/agents/${agent}`)).status).toBe(204);
    expect(await exchangeOn(bUrl)).toMatchObject({ status: 403, error: 'access_denied' });
  });

  it('a protected resource moved off the service on replica A is refused by replica B at the next request', async () => {
    const admin = new ApiClient(a.url('admin'));
    agent = (
      await admin.post('/api/agents', { display_name: 'Agent 2', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    expect((await grant()).status).toBe(201);
    await servedFromMemoryOnB();
    const current = (await admin.get(`/api/services/${service}`)).json<Record<string, unknown>>();
    const {
      id: _id,
      created_at: _created,
      updated_at: _updated,
      callback_url: _callback,
      has_client_secret: _secret,
      ...input
    } = current;
    expect(
      (
        await admin.put(`/api/services/${service}`, {
          ...input,
          protected_resources: ['https://other.example.com/api'],
        })
      ).status,
    ).toBe(200);
    expect(await exchangeOn(bUrl)).toMatchObject({ status: 400, error: 'invalid_target' });
  });
});
