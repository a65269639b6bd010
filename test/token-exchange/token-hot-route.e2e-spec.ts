import { request as httpRequest } from 'node:http';
import { ApiClient, http, startTestBroker, type TestBroker } from '@broker/testing';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

/**
 * `POST /oauth2/token` is answered before Express (the hot route): the same trace,
 * envelope, body-limit, logging and shutdown rules as every other route must hold.
 */
describe('token endpoint hot route', () => {
  let broker: TestBroker;
  let token: string;
  let agent: string;
  let secret: string;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    token = `${broker.url('enduser')}/oauth2/token`;
    const admin = new ApiClient(broker.url('admin'));
    const service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://mail.example.com'],
      })
    ).json<{ id: string }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    agent = (
      await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    secret = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>()
      .client_secret;
  });
  afterAll(() => broker.stop());

  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

  it('issues a token with no-store, a traceresponse continuing the caller trace, and one log line without the form', async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const before = broker.logs.lines.length;
    const response = await http(token, {
      ...form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', traceparent: `00-${trace}-00f067aa0ba902b7-01` },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['traceresponse']).toMatch(new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`));
    const lines = broker.logs
      .records()
      .slice(before)
      .filter((r) => r.msg === 'request completed');
    expect(lines).toEqual([
      expect.objectContaining({
        trace_id: trace,
        method: 'POST',
        route: '/oauth2/token',
        path: '/oauth2/token',
        status: 200,
        server: 'enduser',
      }),
    ]);
    // The client was just written by the admin API, so this request read it from the database.
    expect(lines[0]?.db_queries).toBeGreaterThanOrEqual(1);
    expect(broker.logs.leaked([secret, response.json<{ access_token: string }>().access_token])).toEqual([]);
    // The same client again within the cache's lifetime: no statement at all on the hot path.
    const again = broker.logs.lines.length;
    expect(
      (await http(token, form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret }))).status,
    ).toBe(200);
    expect(
      broker.logs
        .records()
        .slice(again)
        .filter((r) => r.msg === 'request completed'),
    ).toEqual([expect.objectContaining({ route: '/oauth2/token', status: 200, db_queries: 0 })]);
  });

  it('answers errors in the OAuth envelope with a minted trace id', async () => {
    const response = await http(token, form({ grant_type: 'password' }));
    expect(response.status).toBe(400);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(body.error).toBe('unsupported_grant_type');
    expect(response.headers['traceresponse']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('refuses a body over 256 KiB, declared or streamed, and an encoded body, with 400 invalid_request', async () => {
    const big = `grant_type=client_credentials&pad=${'a'.repeat(256 * 1024)}`;
    const declared = await http(token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: big,
    });
    expect(declared.status).toBe(400);
    expect(declared.json<{ error: string }>().error).toBe('invalid_request');
    // Chunked: no content-length, the limit applies while reading.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        token,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res
            .setEncoding('utf8')
            .on('data', (chunk: string) => (body += chunk))
            .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 5; i += 1) req.write('a'.repeat(64 * 1024));
      req.end();
    });
    expect(streamed.status).toBe(400);
    expect((JSON.parse(streamed.body) as { error: string }).error).toBe('invalid_request');
    const encoded = await http(token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      body: 'x',
    });
    expect(encoded.status).toBe(400);
    expect(encoded.json<{ error: string }>().error).toBe('invalid_request');
  });

  it('answers the same through the ordinary route when the URL carries a query string', async () => {
    const response = await http(`${token}?x=1`, form({ grant_type: 'password' }));
    expect(response.status).toBe(400);
    expect(response.json<{ error: string }>().error).toBe('unsupported_grant_type');
  });

  it('serves the JWKS as prepared bytes that follow a key-set change at once', async () => {
    const jwks = `${broker.url('enduser')}/oauth2/jwks.json`;
    const first = await http(jwks);
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    expect(first.headers['traceresponse']).toBeDefined();
    const before = first.json<{ keys: { kid: string }[] }>().keys.map((k) => k.kid);
    const added = (
      await new ApiClient(broker.url('admin')).post('/api/oauth2-server/signing-keys', { algorithm: 'EdDSA' })
    ).json<{ kid: string }>().kid;
    const after = (await http(jwks)).json<{ keys: { kid: string; d?: string }[] }>().keys;
    expect(after.map((k) => k.kid).sort()).toEqual([...before, added].sort());
    expect(after.every((k) => k.d === undefined)).toBe(true);
  });

  it('signs access tokens that verify against the published JWKS under every algorithm (ES256, RS256, EdDSA)', async () => {
    const admin = new ApiClient(broker.url('admin'));
    for (const algorithm of ['RS256', 'EdDSA', 'ES256']) {
      const kid = (await admin.post('/api/oauth2-server/signing-keys', { algorithm })).json<{ kid: string }>().kid;
      expect((await admin.put(`/api/oauth2-server/signing-keys/${kid}/current`)).status).toBe(200);
      const response = await http(
        token,
        form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret }),
      );
      expect(response.status, response.text).toBe(200);
      const keys = createLocalJWKSet((await http(`${broker.url('enduser')}/oauth2/jwks.json`)).json<JSONWebKeySet>());
      const issuer = (await http(`${broker.url('enduser')}/.well-known/oauth-authorization-server`)).json<{
        issuer: string;
      }>().issuer;
      const { payload, protectedHeader } = await jwtVerify(
        response.json<{ access_token: string }>().access_token,
        keys,
        { issuer, typ: 'at+jwt' },
      );
      expect(protectedHeader).toEqual({ alg: algorithm, kid, typ: 'at+jwt' });
      expect(payload).toMatchObject({ sub: agent, agent_id: agent, client_id: agent });
      expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
    }
  });

  it('never serves a cached client past an admin write: rotation, revocation and deletion act at once', async () => {
    const admin = new ApiClient(broker.url('admin'));
    const set = (await admin.get(`/api/agents/${agent}`)).json<{ permission_sets: { permission_set_id: string }[] }>()
      .permission_sets[0]?.permission_set_id;
    const client = (
      await admin.post('/api/agents', { display_name: 'Cached', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    const issue = async (clientSecret: string) =>
      (await http(token, form({ grant_type: 'client_credentials', client_id: client, client_secret: clientSecret })))
        .status;
    const first = (await admin.post(`/api/agents/${client}/client-credentials`, {})).json<{ client_secret: string }>()
      .client_secret;
    expect(await issue(first)).toBe(200);
    const second = (await admin.post(`/api/agents/${client}/client-credentials`, {})).json<{ client_secret: string }>()
      .client_secret;
    expect(await issue(first)).toBe(401);
    expect(await issue(second)).toBe(200);
    expect((await admin.delete(`/api/agents/${client}/client-credentials`)).status).toBe(204);
    expect(await issue(second)).toBe(401);
    const third = (await admin.post(`/api/agents/${client}/client-credentials`, {})).json<{ client_secret: string }>()
      .client_secret;
    expect(await issue(third)).toBe(200);
    expect((await admin.delete(`/api/agents/${client}`)).status).toBe(204);
    expect(await issue(third)).toBe(401);
  });

  it('other methods on the path take the ordinary route', async () => {
    const response = await http(token, { method: 'GET' });
    expect(response.status).toBe(404);
  });

  it('answers 503 with Connection: close once the process is shutting down', async () => {
    const own = await startTestBroker({ servers: BOTH_SERVERS });
    try {
      own.broker.runtime.lifecycle.beginShutdown();
      const response = await http(`${own.url('enduser')}/oauth2/token`, form({ grant_type: 'client_credentials' }));
      expect(response.status).toBe(503);
      expect(response.json<{ error: string }>().error).toBe('temporarily_unavailable');
      expect(response.headers['connection']).toBe('close');
    } finally {
      await own.stop();
    }
  });
});
