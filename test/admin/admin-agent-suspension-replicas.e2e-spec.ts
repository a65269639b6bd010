import {
  ApiClient,
  createPostgresDatabase,
  eventually,
  freePort,
  http,
  postgresServerUrl,
  startJwtIssuer,
  startTestBroker,
  testKey,
  type HttpResponse,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import { TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const RESOURCE = 'https://mail.example.com/api';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/**
 * How long a replica may take to refuse after the other one's answer: well under the client
 * cache's 5 s backstop (`CLIENT_CACHE_TTL_MS`) and the exchange cache's 60 s, so only the
 * `registry_changed` / `exchange_changed` notification can make it refuse within it.
 */
const AT_ONCE = { timeoutMs: 2_000, intervalMs: 10 };

/**
 * Suspending an agent on one replica is refused by the other at once (docs/admin-api.md
 * "Suspending an agent"), although each serves the agent's client and the exchange from
 * memory; resuming on the other replica serves it again on the first.
 */
describe.runIf(postgresServerUrl())('suspending an agent across two replicas on PostgreSQL', () => {
  let issuer: TestJwtIssuer;
  let a: TestBroker;
  let b: TestBroker;
  let aUrl: string;
  let bUrl: string;
  let agent: { id: string; secret: string };

  const exchangeOn = async (url: string): Promise<{ status: number; error?: string; dbQueries: unknown }> => {
    const response = await http(`${url}/oauth2/token`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_assertion_type: JWT_BEARER,
        client_assertion: await issuer.sign({ sub: 'gateway-1' }, { audience: aUrl, ttlSeconds: 3600 }),
        subject_token: await issuer.sign({ sub: ALICE, azp: agent.id }, { audience: aUrl, ttlSeconds: 3600 }),
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: RESOURCE,
      }).toString(),
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
  const clientCredentialsOn = (url: string): Promise<HttpResponse> =>
    http(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, authorization: `Basic ${Buffer.from(`${agent.id}:${agent.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
    });
  const introspectOn = async (url: string, token: string): Promise<{ active: boolean }> =>
    (
      await http(`${url}/oauth2/introspect`, {
        method: 'POST',
        headers: FORM,
        body: new URLSearchParams({
          token,
          client_assertion_type: JWT_BEARER,
          client_assertion: await issuer.sign({ sub: 'gateway-1' }, { audience: aUrl, ttlSeconds: 3600 }),
        }).toString(),
      })
    ).json<{ active: boolean }>();
  /** The replica answers the exchange from memory: a second exchange runs no statement. */
  const servedFromMemoryOn = async (url: string): Promise<void> => {
    await eventually(
      () => exchangeOn(url),
      (answer) => answer.status === 200 && answer.dbQueries === 0,
      { waitingFor: `${url} to answer the exchange from memory` },
    );
  };

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    const storage = { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } };
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    };
    const aPort = await freePort();
    aUrl = `http://127.0.0.1:${aPort}`;
    // Both replicas behind one public URL: the tokens either issues are the other's too.
    const start = (enduserPort: number) =>
      startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          ...keys,
          storage,
          server: { enduser: { port: enduserPort, public_url: aUrl } },
          token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
        },
      });
    a = await start(aPort);
    const bPort = await freePort();
    b = await start(bPort);
    bUrl = `http://127.0.0.1:${bPort}`;
    const admin = new ApiClient(a.url('admin'));
    const service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'mail-client',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/authorize',
        token_endpoint: 'https://idp.example.com/token',
        protected_resources: [RESOURCE],
      })
    ).json<{ id: string }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Expense assistant',
        permission_sets: [{ permission_set_id: set }],
      })
    ).json<{ id: string }>().id;
    const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    agent = { id, secret };
    const granted = await new ApiClient(aUrl, ALICE).post(`/api/consent/agents/${id}/grants`, {
      granted_permission_sets: { [set]: [service] },
    });
    expect(granted.status, granted.text).toBe(201);
    await a.broker
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
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await issuer?.stop();
  });

  it('suspended on B: A refuses the exchange, the client and its tokens at once; resumed on A: B serves again', async () => {
    // A serves the agent from memory: the exchange's context and the client (a second client_credentials).
    await servedFromMemoryOn(aUrl);
    expect((await clientCredentialsOn(aUrl)).status).toBe(200);
    const issued = await clientCredentialsOn(aUrl);
    expect(issued.status, issued.text).toBe(200);
    const token = issued.json<{ access_token: string }>().access_token;
    expect(await introspectOn(aUrl, token)).toEqual(expect.objectContaining({ active: true }));

    const suspended = await new ApiClient(b.url('admin')).put(`/api/agents/${agent.id}/suspension`, {
      reason: 'Incident on replica B',
    });
    expect(suspended.status, suspended.text).toBe(200);

    expect(
      await eventually(
        () => exchangeOn(aUrl),
        (answer) => answer.status === 403,
        {
          ...AT_ONCE,
          waitingFor: 'A to refuse the exchange',
        },
      ),
    ).toMatchObject({ status: 403, error: 'access_denied' });
    const refused = await eventually(
      () => clientCredentialsOn(aUrl),
      (answer) => answer.status === 401,
      {
        ...AT_ONCE,
        waitingFor: "A to refuse the agent's client",
      },
    );
    expect(refused.json()).toEqual({ error: 'invalid_client', error_description: 'the agent is suspended' });
    expect(
      await eventually(
        () => introspectOn(aUrl, token),
        (answer) => !answer.active,
        {
          ...AT_ONCE,
          waitingFor: "A to answer the agent's token inactive",
        },
      ),
    ).toEqual({ active: false });
    // B, where it was suspended, refuses from its answer on.
    expect(await exchangeOn(bUrl)).toMatchObject({ status: 403, error: 'access_denied' });

    // Resumed on A: B, which keeps the suspended client in memory since its refusals, serves again at once.
    expect((await new ApiClient(a.url('admin')).delete(`/api/agents/${agent.id}/suspension`)).status).toBe(204);
    expect(
      await eventually(
        () => exchangeOn(bUrl),
        (answer) => answer.status === 200,
        {
          ...AT_ONCE,
          waitingFor: 'B to serve the exchange again',
        },
      ),
    ).toMatchObject({ status: 200 });
    expect(
      (
        await eventually(
          () => clientCredentialsOn(bUrl),
          (answer) => answer.status === 200,
          {
            ...AT_ONCE,
            waitingFor: "B to accept the agent's client again",
          },
        )
      ).status,
    ).toBe(200);
    expect(await introspectOn(bUrl, token)).toEqual(expect.objectContaining({ active: true }));
    await servedFromMemoryOn(bUrl);
  });
});
