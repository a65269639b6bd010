import {
  ApiClient,
  createPostgresDatabase,
  eventually,
  freePort,
  http,
  postgresServerUrl,
  startJwtIssuer,
  startPostgresWireProxy,
  startTestBroker,
  testKey,
  type PostgresWireProxy,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

/**
 * Introspection keeps what it read about an access token (revoked jti, revoked family, the
 * person's grant) in memory on PostgreSQL. Two broker replicas on one database: a token
 * revoked, a family revoked or a grant revoked through one replica is inactive on the other
 * at the very next request, without polling or waiting for a TTL. A third replica, C, reaches
 * PostgreSQL through a TCP proxy, so that a test can silence its LISTEN connection without
 * closing it (the proxy's extra hop is kept away from the "next request" tests).
 */
describe.runIf(postgresServerUrl())('token introspection served from memory, across two replicas on PostgreSQL', () => {
  let a: TestBroker;
  let b: TestBroker;
  let c: TestBroker | undefined;
  let cUrl: string;
  let asC: oauth.AuthorizationServer;
  let gateway: TestJwtIssuer;
  let proxy: PostgresWireProxy;
  let base: string;
  let bUrl: string;
  let asA: oauth.AuthorizationServer;
  let asB: oauth.AuthorizationServer;
  let agent: { id: string; secret: string };
  let setId: string;
  let serviceId: string;
  const alice = () => new ApiClient(base, ALICE);

  beforeAll(async () => {
    gateway = await startJwtIssuer('ES256');
    const url = await createPostgresDatabase();
    proxy = await startPostgresWireProxy(url);
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    };
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const start = (enduserPort: number, connectionUrl: string) =>
      startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          ...keys,
          storage: { backend: 'postgres', postgres: { connection_url: connectionUrl } },
          server: { enduser: { port: enduserPort, public_url: base } },
          token_exchange: { client_assertion: { issuer_uri: gateway.issuer, jwks_uri: gateway.jwksUri } },
        },
      });
    a = await start(port, url);
    const bPort = await freePort();
    b = await start(bPort, url);
    const cPort = await freePort();
    c = await start(cPort, proxy.url);
    cUrl = `http://127.0.0.1:${cPort}`;
    bUrl = `http://127.0.0.1:${bPort}`;
    const admin = new ApiClient(a.url('admin'));
    serviceId = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://mail.example.com'],
      })
    ).json<{ id: string }>().id;
    setId = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Agent',
        redirect_uris: [REDIRECT],
        allowed_scopes: ['mail.read', 'offline_access'],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    agent = {
      id,
      secret: (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    const discover = async (url: string) => {
      const metadata = await oauth.processDiscoveryResponse(
        new URL(base),
        await oauth.discoveryRequest(new URL(url), { algorithm: 'oauth2', ...insecure }),
      );
      // Both replicas publish the same issuer; each test talks to one replica's endpoints.
      return {
        ...metadata,
        token_endpoint: `${url}/oauth2/token`,
        revocation_endpoint: `${url}/oauth2/revoke`,
        introspection_endpoint: `${url}/oauth2/introspect`,
      };
    };
    asA = await discover(base);
    asB = await discover(bUrl);
    asC = await discover(cUrl);
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await c?.stop();
    await gateway?.stop();
    await proxy?.stop();
  });

  const grant = () =>
    alice().post(`/api/consent/agents/${agent.id}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
  const client = (): oauth.Client => ({ client_id: agent.id });
  const auth = () => oauth.ClientSecretBasic(agent.secret);

  /** A person's tokens through the code flow on replica A (with a refresh token for `offline_access`). */
  async function tokens(scope = 'mail.read offline_access'): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(`${base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: agent.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const redirect = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(redirect.status, redirect.text).toBe(302);
    const callback = oauth.validateAuthResponse(
      asA,
      client(),
      new URL(redirect.headers.location as string),
      oauth.expectNoState,
    );
    return oauth.processAuthorizationCodeResponse(
      asA,
      client(),
      await oauth.authorizationCodeGrantRequest(asA, client(), auth(), callback, REDIRECT, verifier, insecure),
    );
  }

  async function activeOn(as: oauth.AuthorizationServer, token: string): Promise<boolean> {
    return (
      await oauth.processIntrospectionResponse(
        as,
        client(),
        await oauth.introspectionRequest(as, client(), auth(), token, insecure),
      )
    ).active;
  }

  /** One introspection of an active token on B (or C): whether it ran no statement (answered from memory). */
  async function fromMemoryOnB(token: string, replica: 'b' | 'c' = 'b'): Promise<boolean> {
    const [url, broker] = replica === 'b' ? [bUrl, b] : [cUrl, c as TestBroker];
    const response = await http(`${url}/oauth2/introspect`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${agent.id}:${agent.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(response.json<{ active: boolean }>().active).toBe(true);
    const traceId = String(response.headers.traceresponse).split('-')[1];
    const line = broker.logs.records().find((r) => r.trace_id === traceId && r.route === '/oauth2/introspect');
    return line?.db_queries === 0;
  }

  /** B answers from memory: an introspection after the first runs no statement. */
  async function servedFromMemoryOnB(token: string, replica: 'b' | 'c' = 'b'): Promise<void> {
    for (let i = 0; i < 50; i += 1) if (await fromMemoryOnB(token, replica)) return;
    throw new Error(`replica ${replica.toUpperCase()} never answered from memory`);
  }

  beforeAll(async () => {
    expect((await grant()).status).toBe(201);
  });

  it('an access token revoked on replica A is inactive on replica B at the next request', async () => {
    const { access_token: token } = await tokens('mail.read');
    await servedFromMemoryOnB(token);
    expect((await oauth.revocationRequest(asA, client(), auth(), token, insecure)).status).toBe(200);
    expect(await activeOn(asB, token)).toBe(false);
  });

  it('a refresh token family revoked on replica A ends its access tokens on replica B at the next request', async () => {
    const { access_token: token, refresh_token: refresh } = await tokens();
    await servedFromMemoryOnB(token);
    expect((await oauth.revocationRequest(asA, client(), auth(), refresh as string, insecure)).status).toBe(200);
    expect(await activeOn(asB, token)).toBe(false);
    expect(await activeOn(asB, refresh as string)).toBe(false);
  });

  it('a grant revoked by the person on replica A is inactive on replica B at the next request', async () => {
    const { access_token: token } = await tokens('mail.read');
    await servedFromMemoryOnB(token);
    expect((await alice().delete(`/api/consent/agents/${agent.id}/grants`)).status).toBe(204);
    expect(await activeOn(asB, token)).toBe(false);
    expect(await activeOn(asA, token)).toBe(false);
    expect((await grant()).status).toBe(201);
  });

  it('an agent deleted by an administrator on replica A is inactive on replica B at the next request (the gateway asks)', async () => {
    const admin = new ApiClient(a.url('admin'));
    const doomed = (await admin.post('/api/agents', { display_name: 'Doomed', allowed_scopes: ['mail.read'] })).json<{
      id: string;
    }>().id;
    const secret = (await admin.post(`/api/agents/${doomed}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    const issued = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: doomed,
        client_secret: secret,
      }).toString(),
    });
    const token = issued.json<{ access_token: string }>().access_token;
    const assertion = await gateway.sign({ sub: 'gateway' }, { audience: base, ttlSeconds: 3600 });
    const askB = async () => {
      const response = await http(`${bUrl}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        }).toString(),
      });
      expect(response.status, response.text).toBe(200);
      return response.json<{ active: boolean }>().active;
    };
    expect(await askB()).toBe(true);
    expect(await askB()).toBe(true);
    expect((await admin.delete(`/api/agents/${doomed}`)).status).toBe(204);
    expect(await askB()).toBe(false);
  });

  it("an access token revoked on replica A is inactive on replica C within seconds although C's LISTEN connection went silent, and C serves from memory again once its heartbeat is back", async () => {
    const { access_token: token } = await tokens('mail.read');
    await servedFromMemoryOnB(token, 'c');
    // C's LISTEN connection stops delivering without closing: a half-open socket.
    const sessions = proxy.sessions('agent-identity-broker-listen');
    expect(sessions).toHaveLength(1);
    const [listen] = sessions;
    listen?.freeze();
    expect((await oauth.revocationRequest(asA, client(), auth(), token, insecure)).status).toBe(200);
    // No notification reaches C: its heartbeat finds the silence, and C reads the database.
    expect(
      await eventually(
        () => activeOn(asC, token),
        (active) => !active,
        { timeoutMs: 20_000, waitingFor: 'replica C to see the revocation' },
      ),
    ).toBe(false);
    // C ended the silent connection, and once a new one's heartbeat came back it serves from memory again.
    await eventually(() => listen?.closedByClient, Boolean, { waitingFor: 'replica C to end the silent connection' });
    const { access_token: fresh } = await tokens('mail.read');
    await eventually(() => fromMemoryOnB(fresh, 'c'), Boolean, {
      timeoutMs: 20_000,
      waitingFor: 'C to serve from memory',
    });
    const down = (c as TestBroker).logs.records().filter((r) => String(r.msg).startsWith('LISTEN connection down'));
    expect(down.map((r) => r.reason)).toEqual(['no heartbeat came back within 3000 ms']);
    expect((c as TestBroker).logs.records().some((r) => String(r.msg).startsWith('LISTEN connection back'))).toBe(true);
    const metrics = (await http(`${(c as TestBroker).url('admin')}/metrics`)).text;
    expect(metrics).toContain('\nbroker_db_listen_outages_total 1\n');
    expect(metrics).toContain('\nbroker_db_listen_down 0\n');
  });

  it('gives concurrent refreshes of one token by its client, on replicas A and B at once, one successor (the reuse grace)', async () => {
    expect((await grant()).status).toBeLessThan(300);
    const { refresh_token: refreshToken } = await tokens();
    const basic = `Basic ${Buffer.from(`${agent.id}:${encodeURIComponent(agent.secret)}`).toString('base64')}`;
    const refresh = (url: string) =>
      http(`${url}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken as string }).toString(),
      });
    const answers = await Promise.all([base, bUrl, base, bUrl, base, bUrl].map(refresh));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // Exactly one rotation, whichever replica won it: every presentation within the grace got its successor.
    const successors = new Set(answers.map((answer) => answer.json<{ refresh_token: string }>().refresh_token));
    expect(successors.size).toBe(1);
    const [successor] = [...successors] as [string];
    expect(await activeOn(asB, successor)).toBe(true);
    expect(await activeOn(asA, refreshToken as string)).toBe(false);
    for (const answer of answers)
      expect(await activeOn(asA, answer.json<{ access_token: string }>().access_token)).toBe(true);
  });
});
