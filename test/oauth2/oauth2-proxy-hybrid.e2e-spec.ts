import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiClient,
  completeAuthorization,
  freePort,
  http,
  startEnterpriseIdp,
  startOidcProvider,
  startTestBroker,
  type TestBroker,
  type TestEnterpriseIdp,
  type TestOidcProvider,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const REDIRECT = 'https://agent.example.com/cb';
const UPSTREAM_CLIENT = 'agent-at-upstream';
const UPSTREAM_SECRET = 'upstream-client-secret-0b5e';

interface Upstream {
  provider: TestOidcProvider;
  tokenRequestHeaders: Record<string, unknown>[];
}

async function startUpstream(): Promise<Upstream> {
  const provider = await startOidcProvider({
    clients: [
      {
        client_id: UPSTREAM_CLIENT,
        client_secret: UPSTREAM_SECRET,
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    configuration: {
      scopes: ['openid', 'mail.read'],
      pkce: { required: () => true },
      findAccount: (_ctx: unknown, id: string) =>
        Promise.resolve({ accountId: id, claims: () => Promise.resolve({ sub: id }) }),
    },
  });
  const tokenRequestHeaders: Record<string, unknown>[] = [];
  provider.provider.use(async (ctx, next) => {
    if (ctx.path === '/token') tokenRequestHeaders.push({ ...ctx.headers });
    await next();
    if (ctx.path === '/token') {
      ctx.set('Set-Cookie', 'upstream_session=should-not-reach-the-client');
      ctx.set('X-Upstream-Internal', 'should-not-reach-the-client');
    }
  });
  return { provider, tokenRequestHeaders };
}

function proxyConfig(
  upstream: string,
  mode: 'proxy' | 'hybrid',
  jwksUri = `${upstream}/jwks`,
): Record<string, unknown> {
  return {
    oauth2_authorization_server: {
      mode,
      proxy: {
        upstream_issuer_uri: upstream,
        upstream_authorize_endpoint: `${upstream}/auth`,
        upstream_token_endpoint: `${upstream}/token`,
        upstream_jwks_uri: jwksUri,
        upstream_timeout: '2s',
      },
    },
  };
}

async function authorizeUrl(base: string, clientId: string, verifier: string, state = 'client-state'): Promise<string> {
  const url = new URL(`${base}/oauth2/authorize`);
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

describe('OAuth2 server in proxy mode', () => {
  let upstream: Upstream;
  let broker: TestBroker;
  let base: string;
  let proxied: string;
  let unregistered: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { server: { enduser: { port, public_url: base } }, ...proxyConfig(upstream.provider.issuer, 'proxy') },
    });
    const admin = new ApiClient(broker.url('admin'));
    proxied = (
      await admin.post('/api/agents', {
        display_name: 'Proxied',
        client_id: UPSTREAM_CLIENT,
        redirect_uris: [REDIRECT],
      })
    ).json<{ id: string }>().id;
    unregistered = (
      await admin.post('/api/agents', { display_name: 'No upstream id', redirect_uris: [REDIRECT] })
    ).json<{ id: string }>().id;
  });

  afterAll(async () => {
    await broker.stop();
    await upstream.provider.stop();
  });

  it('republishes the upstream key set verbatim', async () => {
    const mine = await http(`${base}/oauth2/jwks.json`);
    const theirs = await fetch(`${upstream.provider.issuer}/jwks`).then((r) => r.json());
    expect(mine.status).toBe(200);
    expect(mine.headers['cache-control']).toBe('public, max-age=300');
    expect(mine.json()).toEqual(theirs);
  });

  it('keeps its own issuer in the metadata, with the proxy grant types', async () => {
    const metadata = (await http(`${base}/.well-known/oauth-authorization-server`)).json<Record<string, unknown>>();
    expect(metadata).toMatchObject({
      issuer: base,
      jwks_uri: `${base}/oauth2/jwks.json`,
      grant_types_supported: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
    });
  });

  it("redirects authorization upstream with the agent's upstream client_id and PKCE; the agent id travels in a JWE state", async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const response = await http(await authorizeUrl(base, proxied, verifier), { headers: { 'x-remote-user': 'alice' } });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${upstream.provider.issuer}/auth`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      client_id: UPSTREAM_CLIENT,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge_method: 'S256',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    });
    expect(location.searchParams.get('state')?.split('.')).toHaveLength(5);
  });

  it('redirects server_error (with state) for an agent without an upstream client_id', async () => {
    const response = await http(await authorizeUrl(base, unregistered, oauth.generateRandomCodeVerifier(), 'st'), {
      headers: { 'x-remote-user': 'alice' },
    });
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('server_error');
    expect(location.searchParams.get('state')).toBe('st');
  });

  it('forwards the token request upstream with only the form content type, and relays only the allowed headers', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const start = await http(await authorizeUrl(base, proxied, verifier), { headers: { 'x-remote-user': 'alice' } });
    const callback = new URL(await completeAuthorization(start.headers.location as string, REDIRECT));
    const code = callback.searchParams.get('code') as string;
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: 'broker_session=private',
        'x-remote-user': 'alice',
        'x-forwarded-for': '10.1.2.3',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        client_id: proxied,
        client_secret: UPSTREAM_SECRET,
      }).toString(),
    });
    expect(response.status, response.text).toBe(200);
    expect(response.json<{ access_token: string; token_type: string }>().token_type).toBe('Bearer');
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(response.headers['x-upstream-internal']).toBeUndefined();
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const seen = upstream.tokenRequestHeaders.at(-1) as Record<string, unknown>;
    for (const header of ['authorization', 'cookie', 'x-remote-user', 'x-forwarded-for', 'traceparent'])
      expect(seen[header], header).toBeUndefined();
    expect(seen['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it("relays the upstream's own error for a bad code", async () => {
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'nope',
        redirect_uri: REDIRECT,
        code_verifier: oauth.generateRandomCodeVerifier(),
        client_id: proxied,
        client_secret: UPSTREAM_SECRET,
      }).toString(),
    });
    expect(response.status).toBe(400);
    expect(response.json<{ error: string }>().error).toBe('invalid_grant');
  });

  it('does not offer client_credentials in proxy mode', async () => {
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${proxied}`,
    });
    expect(response.json<{ error: string }>().error).toBe('unsupported_grant_type');
  });

  it('reports upstream_jwks healthy in /health', async () => {
    const health = (await http(`${base}/health`)).json<{ status: string; components: Record<string, string> }>();
    expect(health).toMatchObject({ status: 'healthy', components: { upstream_jwks: 'healthy' } });
  });
});

describe('OAuth2 server in proxy mode with the upstream down', () => {
  it('answers the JWKS with 503 and reports upstream_jwks degraded without changing the top-level status', async () => {
    const broker = await startTestBroker({ servers: BOTH_SERVERS, config: proxyConfig('http://127.0.0.1:9', 'proxy') });
    try {
      const jwks = await http(`${broker.url('enduser')}/oauth2/jwks.json`);
      expect(jwks.status).toBe(503);
      expect(jwks.json<{ error: string }>().error).toBe('temporarily_unavailable');
      const health = await http(`${broker.url('enduser')}/health`);
      expect(health.status).toBe(200);
      expect(health.json()).toMatchObject({ status: 'healthy', components: { upstream_jwks: 'degraded' } });
      const token = await http(`${broker.url('enduser')}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&client_id=3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      });
      expect(token.json<{ error: string }>().error).toBe('invalid_client');
    } finally {
      await broker.stop();
    }
  });
});

describe('OAuth2 server in hybrid mode', () => {
  let upstream: Upstream;
  let broker: TestBroker;
  let base: string;
  let idp: TestEnterpriseIdp;

  beforeAll(async () => {
    upstream = await startUpstream();
    idp = await startEnterpriseIdp({});
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = proxyConfig(upstream.provider.issuer, 'hybrid') as {
      oauth2_authorization_server: Record<string, unknown>;
    };
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: {
          ...config.oauth2_authorization_server,
          enterprise: { trusted_issuers: { issuer_uri: idp.issuer, jwks_uri: idp.jwksUri } },
        },
      },
    });
  });

  afterAll(async () => {
    await broker.stop();
    await upstream.provider.stop();
    await idp.stop();
  });

  it('publishes the union of local and upstream keys, and the union of grant types', async () => {
    const mine = (await http(`${base}/oauth2/jwks.json`)).json<{ keys: { kid: string }[] }>();
    const theirs = (await fetch(`${upstream.provider.issuer}/jwks`).then((r) => r.json())) as {
      keys: { kid: string }[];
    };
    const local = (await new ApiClient(broker.url('admin')).get('/api/oauth2-server/signing-keys')).json<{
      items: { kid: string }[];
    }>().items;
    expect(mine.keys.map((k) => k.kid).sort()).toEqual(
      [...local.map((k) => k.kid), ...theirs.keys.map((k) => k.kid)].sort(),
    );
    const metadata = (await http(`${base}/.well-known/oauth-authorization-server`)).json<{
      grant_types_supported: string[];
    }>();
    // refresh_token: the local agents' (docs/oauth2.md "Token lifecycle").
    // The JWT bearer grant: an enterprise IdP is trusted (docs/oauth2.md "Enterprise-managed authorization").
    expect(metadata.grant_types_supported.sort()).toEqual([
      'authorization_code',
      'client_credentials',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
  });

  it("takes an enterprise IdP's identity assertion for a local agent, and refuses it for a proxied one (unauthorized_client)", async () => {
    const admin = new ApiClient(broker.url('admin'));
    const resource = 'https://hybrid-mcp.example.com/mcp';
    expect(
      (
        await admin.post('/api/resources', {
          display_name: 'Hybrid MCP',
          resource_uri: resource,
          scopes: [{ scope: 'tools', description: 'Use the tools' }],
        })
      ).status,
    ).toBe(201);
    const agent = async (body: Record<string, unknown>) => {
      const id = (await admin.post('/api/agents', body)).json<{ id: string }>().id;
      const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret;
      return { id, secret };
    };
    const local = await agent({ display_name: 'Local enterprise agent' });
    const proxied = await agent({ display_name: 'Proxied enterprise agent', client_id: 'upstream-enterprise' });
    const present = async (client: { id: string; secret: string }) =>
      http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
          assertion: await idp.signIdJag({
            sub: 'alice',
            audience: base,
            clientId: client.id,
            resource,
            scope: 'tools',
          }),
          client_id: client.id,
          client_secret: client.secret,
        }).toString(),
      });
    const issued = await present(local);
    expect(issued.status, issued.text).toBe(200);
    expect(issued.json<{ resource: string; refresh_token?: string }>()).toMatchObject({ resource });
    // A proxied agent's tokens are the upstream's: the broker could neither introspect nor revoke one of its own.
    const refused = await present(proxied);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json<{ error: string }>().error).toBe('unauthorized_client');
  });

  it("issues and rotates refresh tokens for a local agent; a proxied agent's refresh is not the broker's (invalid_grant)", async () => {
    const admin = new ApiClient(broker.url('admin'));
    const serviceId = (
      await admin.post('/api/services', {
        display_name: 'S',
        client_id: 's',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://api.example.com'],
      })
    ).json<{ id: string }>().id;
    const setId = (
      await admin.post('/api/permission-sets', {
        name: 'S',
        service_scopes: [{ service_id: serviceId, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
    const local = (
      await admin.post('/api/agents', {
        display_name: 'Local, offline',
        redirect_uris: [REDIRECT],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    const proxied = (
      await admin.post('/api/agents', {
        display_name: 'Proxied, offline',
        client_id: UPSTREAM_CLIENT,
        redirect_uris: [REDIRECT],
      })
    ).json<{ id: string }>().id;
    expect(
      (
        await new ApiClient(base, 'alice').post(`/api/consent/agents/${local}/grants`, {
          granted_permission_sets: { [setId]: [serviceId] },
        })
      ).status,
    ).toBe(201);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(await authorizeUrl(base, local, verifier));
    url.searchParams.set('scope', 'offline_access');
    const code = new URL(
      (await http(url.toString(), { headers: { 'x-remote-user': 'alice' } })).headers.location as string,
    ).searchParams.get('code') as string;
    const token = (form: Record<string, string>) =>
      http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
    const issued = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: local,
    });
    expect(issued.status, issued.text).toBe(200);
    const refreshToken = issued.json<{ refresh_token: string }>().refresh_token;
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: local });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.json<{ refresh_token: string }>().refresh_token).not.toBe(refreshToken);
    const upstreamToken = await token({
      grant_type: 'refresh_token',
      refresh_token: 'an-upstream-refresh-token',
      client_id: proxied,
    });
    expect(upstreamToken.status).toBe(400);
    expect(upstreamToken.json<{ error: string }>().error).toBe('invalid_grant');
  });

  it('dispatches per agent: an upstream client_id goes upstream, any other agent is served locally', async () => {
    const admin = new ApiClient(broker.url('admin'));
    const proxied = (
      await admin.post('/api/agents', {
        display_name: 'Proxied',
        client_id: UPSTREAM_CLIENT,
        redirect_uris: [REDIRECT],
      })
    ).json<{ id: string }>().id;
    const local = (await admin.post('/api/agents', { display_name: 'Local', redirect_uris: [REDIRECT] })).json<{
      id: string;
    }>().id;
    const up = await http(await authorizeUrl(base, proxied, oauth.generateRandomCodeVerifier()), {
      headers: { 'x-remote-user': 'alice' },
    });
    expect(up.headers.location).toMatch(new RegExp(`^${upstream.provider.issuer}/auth\\?`));
    const here = await http(await authorizeUrl(base, local, oauth.generateRandomCodeVerifier()), {
      headers: { 'x-remote-user': 'alice' },
    });
    // Local agent without a grant: the broker's own consent page.
    expect(here.headers.location).toMatch(new RegExp(`/agents/${local}\\?session_token=`));
  });
});

describe('OAuth2 server in hybrid mode with a kid published twice', () => {
  let server: Server;

  afterAll(() => {
    server?.close();
  });

  it('answers the JWKS with 500', async () => {
    let localKid = '';
    server = createServer((_request, response) => {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: localKid }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: proxyConfig('https://upstream.example.com', 'hybrid', jwksUri),
    });
    try {
      localKid = (await new ApiClient(broker.url('admin')).get('/api/oauth2-server/signing-keys')).json<{
        items: { kid: string }[];
      }>().items[0]?.kid as string;
      const response = await http(`${broker.url('enduser')}/oauth2/jwks.json`);
      expect(response.status).toBe(500);
      expect(response.json<{ error: string }>().error).toBe('server_error');
    } finally {
      await broker.stop();
    }
  });
});
