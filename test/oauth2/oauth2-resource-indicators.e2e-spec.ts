import { createHash } from 'node:crypto';
import { AuthorizationCodeRepository } from '@broker/persistence';
import { ApiClient, freePort, http, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const MCP_A = 'https://mcp-a.example.com/mcp';
const MCP_B = 'https://tools.example.com/b/mcp';
const OUTSIDE = 'https://elsewhere.example.com/mcp';
const insecure = { [oauth.allowInsecureRequests]: true };
/**
 * The resources asked for successfully below: none is registered as a protected resource, so
 * each is one of the service's protected resources the grant delegates (docs/oauth2.md "Consent
 * per MCP server": an unregistered resource of no service is `invalid_target`).
 */
const SERVICE_RESOURCES = [
  MCP_A,
  MCP_B,
  'https://tools.example.com/x?tenant=1',
  'https://tools.example.com/b/other',
  'https://any.example.org/mcp',
  'http://127.0.0.1:8931/mcp',
  'http://localhost:3000/mcp',
];

/** A local broker with one confidential agent Alice has granted, and one she has not. */
async function setUp(
  config: Record<string, unknown>,
  agentFields: Record<string, unknown> = {},
  storage?: Record<string, unknown>,
): Promise<{
  broker: TestBroker;
  base: string;
  as: oauth.AuthorizationServer;
  agent: { id: string; secret: string };
  ungranted: string;
}> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const broker = await startTestBroker({
    servers: BOTH_SERVERS,
    config: {
      server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
      oauth2_authorization_server: config,
      ...(storage === undefined ? {} : { storage }),
    },
  });
  const admin = new ApiClient(broker.url('admin'));
  const alice = new ApiClient(base, ALICE);
  const serviceId = (
    await admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'm',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: ['https://mail.example.com', ...SERVICE_RESOURCES],
    })
  ).json<{ id: string }>().id;
  const setId = (
    await admin.post('/api/permission-sets', {
      name: 'Mail',
      service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
    })
  ).json<{ id: string }>().id;
  const id = (
    await admin.post('/api/agents', {
      display_name: 'MCP client',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: setId }],
      ...agentFields,
    })
  ).json<{ id: string }>().id;
  const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
    .client_secret;
  await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
  const ungranted = (
    await admin.post('/api/agents', {
      display_name: 'Not yet granted',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: setId }],
    })
  ).json<{ id: string }>().id;
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
  return { broker, base, as, agent: { id, secret }, ungranted };
}

async function authorizeUrl(
  as: oauth.AuthorizationServer,
  clientId: string,
  resources: readonly string[],
): Promise<{ url: URL; verifier: string; state: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'mail.read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  for (const resource of resources) url.searchParams.append('resource', resource);
  return { url, verifier, state };
}

/** Alice's authorization request for `resources`: the redirect (code or error), with the verifier and state. */
async function authorizeAs(
  as: oauth.AuthorizationServer,
  agentId: string,
  resources: readonly string[],
): Promise<{ location: URL; verifier: string; state: string }> {
  const { url, verifier, state } = await authorizeUrl(as, agentId, resources);
  const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
  expect(response.status, response.text).toBe(302);
  return { location: new URL(response.headers.location as string), verifier, state };
}

describe('RFC 8707 resource indicators, local mode with allowed_resources (driven by oauth4webapi)', () => {
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let agent: { id: string; secret: string };
  let ungranted: string;
  let client: oauth.Client;

  beforeAll(async () => {
    ({ broker, base, as, agent, ungranted } = await setUp({
      cimd: { enabled: true },
      local: {
        resource_indicators: { allowed_resources: [MCP_A, 'https://tools.example.com/'] },
        token_claims_expression: '{"aud": "https://forged.example.com", "asked": request.resource}',
      },
    }));
    client = { client_id: agent.id };
  });

  afterAll(async () => {
    await broker.stop();
  });

  const authorize = (resources: readonly string[]) => authorizeAs(as, agent.id, resources);

  async function redeem(resources: readonly string[], tokenResource?: string): Promise<Response> {
    const { location, verifier, state } = await authorize(resources);
    const params = oauth.validateAuthResponse(as, client, location, state);
    return oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(agent.secret),
      params,
      REDIRECT,
      verifier,
      { ...insecure, additionalParameters: tokenResource === undefined ? undefined : { resource: tokenResource } },
    );
  }

  const verify = async (token: string, audience?: string) =>
    (await jwtVerify(token, createRemoteJWKSet(new URL(as.jwks_uri as string)), { issuer: base, audience })).payload;

  it('publishes client_id_metadata_document_supported when CIMD is enabled', () => {
    expect(as.client_id_metadata_document_supported).toBe(true);
  });

  it('binds the token to the one requested resource (aud a string); the claims expression sees it and cannot replace aud', async () => {
    const result = await oauth.processAuthorizationCodeResponse(as, client, await redeem([MCP_A]));
    const payload = await verify(result.access_token, MCP_A);
    expect(payload.aud).toBe(MCP_A);
    expect(payload.asked).toEqual([MCP_A]);
    expect(payload.sub).toBe(ALICE);
  });

  it('binds the token to two resources (aud an array), and narrows it to one on the token request', async () => {
    const both = await oauth.processAuthorizationCodeResponse(as, client, await redeem([MCP_A, MCP_B]));
    expect((await verify(both.access_token)).aud).toEqual([MCP_A, MCP_B]);
    const narrowed = await oauth.processAuthorizationCodeResponse(as, client, await redeem([MCP_A, MCP_B], MCP_B));
    const payload = await verify(narrowed.access_token, MCP_B);
    expect(payload.aud).toBe(MCP_B);
    expect(payload.asked).toEqual([MCP_B]);
  });

  it('refuses a token request resource outside the authorized ones (invalid_target)', async () => {
    const response = await redeem([MCP_A], MCP_B);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'invalid_target',
      error_description: 'the resource was not part of the authorization',
    });
    const withoutAny = await redeem([], MCP_A);
    expect(withoutAny.status).toBe(400);
    expect(((await withoutAny.json()) as { error: string }).error).toBe('invalid_target');
    const outside = await redeem([MCP_A], OUTSIDE);
    expect(outside.status).toBe(400);
    expect(((await outside.json()) as { error: string }).error).toBe('invalid_target');
  });

  it('refuses at authorize, by redirect with state, a resource outside the list, with a fragment, or relative', async () => {
    for (const resources of [
      [OUTSIDE],
      [MCP_A, OUTSIDE],
      [`${MCP_A}#frag`],
      ['/mcp'],
      ['mcp-a.example.com'],
      ['https://tools.example.com/b/../../admin'],
      ['https://tools.example.com.evil.com/mcp'],
    ]) {
      const { location, state } = await authorize(resources);
      expect(location.origin + location.pathname, resources.join(' ')).toBe(REDIRECT);
      expect(location.searchParams.get('error'), resources.join(' ')).toBe('invalid_target');
      expect(location.searchParams.get('state')).toBe(state);
      expect(location.searchParams.get('code')).toBeNull();
    }
  });

  it('accepts prefixes ending in / and binds the resource exactly as sent', async () => {
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await redeem(['https://tools.example.com/x?tenant=1']),
    );
    expect((await verify(result.access_token)).aud).toBe('https://tools.example.com/x?tenant=1');
  });

  it('client_credentials: binds aud to the resource, refuses one outside the list', async () => {
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(agent.secret),
      new URLSearchParams({ resource: MCP_A }),
      insecure,
    );
    const result = await oauth.processClientCredentialsResponse(as, client, response);
    const payload = await verify(result.access_token, MCP_A);
    expect(payload).toMatchObject({ aud: MCP_A, sub: agent.id, asked: [MCP_A] });
    const outside = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(agent.secret),
      new URLSearchParams({ resource: OUTSIDE }),
      insecure,
    );
    expect(outside.status).toBe(400);
    expect(await outside.json()).toEqual({
      error: 'invalid_target',
      error_description: 'the resource is not one this authorization server issues tokens for',
    });
    const fragment = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(agent.secret),
      new URLSearchParams({ resource: `${MCP_A}#x` }),
      insecure,
    );
    expect(((await fragment.json()) as { error: string }).error).toBe('invalid_target');
  });

  it('without resource: the claims expression keeps setting aud, as before', async () => {
    const result = await oauth.processAuthorizationCodeResponse(as, client, await redeem([]));
    const payload = decodeJwt(result.access_token);
    expect(payload.aud).toBe('https://forged.example.com');
    expect(payload.asked).toEqual([]);
  });

  it('shows the requested resources in the consent detail of the session token', async () => {
    const { url } = await authorizeUrl(as, ungranted, [MCP_A, MCP_B]);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    const consent = new URL(response.headers.location as string);
    expect(consent.origin).toBe('https://consent.example.com');
    const token = consent.searchParams.get('session_token') as string;
    const detail = await new ApiClient(base, ALICE).get(
      `/api/consent/agents/${ungranted}?session_token=${encodeURIComponent(token)}`,
    );
    expect(detail.status).toBe(200);
    expect(
      detail.json<{ data: { authorization_context: { resources: string[] } } }>().data.authorization_context.resources,
    ).toEqual([MCP_A, MCP_B]);
    // A refused resource never reaches the consent page.
    const refused = await http((await authorizeUrl(as, ungranted, [OUTSIDE])).url.toString(), {
      headers: { 'x-remote-user': ALICE },
    });
    expect(new URL(refused.headers.location as string).searchParams.get('error')).toBe('invalid_target');
  });
});

describe('RFC 8707 resource indicators, an agent restricted by its own allowed_resources', () => {
  const AGENT_PREFIX = 'https://tools.example.com/b/';
  let broker: TestBroker;
  let as: oauth.AuthorizationServer;
  let agent: { id: string; secret: string };
  let client: oauth.Client;
  let admin: ApiClient;

  beforeAll(async () => {
    // The server accepts MCP_A and everything under tools.example.com; this agent only under /b/ (and OUTSIDE, which the server refuses).
    ({ broker, as, agent } = await setUp(
      { local: { resource_indicators: { allowed_resources: [MCP_A, 'https://tools.example.com/'] } } },
      { allowed_resources: [AGENT_PREFIX, OUTSIDE] },
    ));
    client = { client_id: agent.id };
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await broker.stop();
  });

  const authorize = (resources: readonly string[]) => authorizeAs(as, agent.id, resources);

  async function redeem(
    code: { location: URL; verifier: string; state: string },
    tokenResource?: string,
  ): Promise<Response> {
    const params = oauth.validateAuthResponse(as, client, code.location, code.state);
    return oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(agent.secret),
      params,
      REDIRECT,
      code.verifier,
      { ...insecure, additionalParameters: tokenResource === undefined ? undefined : { resource: tokenResource } },
    );
  }

  const clientCredentials = (secret: string, clientId: string, resource: string) =>
    oauth.clientCredentialsGrantRequest(
      as,
      { client_id: clientId },
      oauth.ClientSecretPost(secret),
      new URLSearchParams({ resource }),
      insecure,
    );

  it('binds a resource inside both the server policy and the agent list (authorize, token, client_credentials)', async () => {
    const result = await oauth.processAuthorizationCodeResponse(as, client, await redeem(await authorize([MCP_B])));
    expect(decodeJwt(result.access_token).aud).toBe(MCP_B);
    const narrowed = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await redeem(await authorize([MCP_B, `${AGENT_PREFIX}other`]), `${AGENT_PREFIX}other`),
    );
    expect(decodeJwt(narrowed.access_token).aud).toBe(`${AGENT_PREFIX}other`);
    const credentials = await oauth.processClientCredentialsResponse(
      as,
      client,
      await clientCredentials(agent.secret, agent.id, MCP_B),
    );
    expect(decodeJwt(credentials.access_token).aud).toBe(MCP_B);
  });

  it('refuses at authorize, by redirect with state, a resource the server allows but the agent does not, and one only the agent lists', async () => {
    for (const resources of [
      [MCP_A],
      [MCP_B, MCP_A],
      ['https://tools.example.com/c/mcp'],
      ['https://tools.example.com/b'],
      [`${AGENT_PREFIX}../c/mcp`],
      [OUTSIDE],
    ]) {
      const { location, state } = await authorize(resources);
      expect(location.origin + location.pathname, resources.join(' ')).toBe(REDIRECT);
      expect(location.searchParams.get('error'), resources.join(' ')).toBe('invalid_target');
      expect(location.searchParams.get('state')).toBe(state);
      expect(location.searchParams.get('code')).toBeNull();
    }
  });

  it('refuses on the token request a resource outside the agent list (invalid_target)', async () => {
    const response = await redeem(await authorize([MCP_B]), MCP_A);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'invalid_target',
      error_description: 'the resource is not one this client may ask tokens for',
    });
  });

  it('client_credentials: refuses a resource outside the agent list, or outside the server policy though the agent lists it', async () => {
    const outsideAgent = await clientCredentials(agent.secret, agent.id, MCP_A);
    expect(outsideAgent.status).toBe(400);
    expect(await outsideAgent.json()).toEqual({
      error: 'invalid_target',
      error_description: 'the resource is not one this client may ask tokens for',
    });
    const outsideServer = await clientCredentials(agent.secret, agent.id, OUTSIDE);
    expect(outsideServer.status).toBe(400);
    expect(await outsideServer.json()).toEqual({
      error: 'invalid_target',
      error_description: 'the resource is not one this authorization server issues tokens for',
    });
  });

  it("re-checks the code's resources at the token request: an admin who narrows the agent in between wins", async () => {
    const code = await authorize([MCP_B]);
    const current = (await admin.get(`/api/agents/${agent.id}`)).json<{
      display_name: string;
      redirect_uris: string[];
      permission_sets: unknown[];
      allowed_resources: string[];
    }>();
    const body = {
      display_name: current.display_name,
      redirect_uris: current.redirect_uris,
      permission_sets: current.permission_sets,
    };
    expect((await admin.put(`/api/agents/${agent.id}`, { ...body, allowed_resources: [MCP_A] })).status).toBe(200);
    try {
      const response = await redeem(code);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_target');
    } finally {
      expect(
        (await admin.put(`/api/agents/${agent.id}`, { ...body, allowed_resources: current.allowed_resources })).status,
      ).toBe(200);
    }
  });

  it('leaves an agent without allowed_resources (omitted or []) to the server policy alone', async () => {
    for (const fields of [{}, { allowed_resources: [] }]) {
      const id = (await admin.post('/api/agents', { display_name: 'Unrestricted', ...fields })).json<{ id: string }>()
        .id;
      const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret;
      for (const resource of [MCP_A, MCP_B, 'https://tools.example.com/c/mcp']) {
        const result = await oauth.processClientCredentialsResponse(
          as,
          { client_id: id },
          await clientCredentials(secret, id, resource),
        );
        expect(decodeJwt(result.access_token).aud, resource).toBe(resource);
      }
      expect(((await (await clientCredentials(secret, id, OUTSIDE)).json()) as { error: string }).error).toBe(
        'invalid_target',
      );
    }
  });
});

describe('RFC 8707 resource indicators, local mode with the default policy', () => {
  let broker: TestBroker;
  let as: oauth.AuthorizationServer;
  let agent: { id: string; secret: string };
  let client: oauth.Client;

  beforeAll(async () => {
    ({ broker, as, agent } = await setUp({}));
    client = { client_id: agent.id };
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('does not publish client_id_metadata_document_supported when CIMD is disabled', () => {
    expect(as.client_id_metadata_document_supported).toBeUndefined();
  });

  it('accepts any https URI and http on loopback; refuses plain http elsewhere, fragments and relative references', async () => {
    const ask = (resource: string) =>
      oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(agent.secret),
        new URLSearchParams({ resource }),
        insecure,
      );
    for (const resource of ['https://any.example.org/mcp', 'http://127.0.0.1:8931/mcp', 'http://localhost:3000/mcp']) {
      const result = await oauth.processClientCredentialsResponse(as, client, await ask(resource));
      expect(decodeJwt(result.access_token).aud, resource).toBe(resource);
    }
    for (const resource of [
      'http://mcp.example.com/mcp',
      'https://any.example.org/mcp#f',
      '/mcp',
      'urn:example:mcp',
      'https://user:pw@any.example.org/mcp',
      '',
    ]) {
      const response = await ask(resource);
      expect(response.status, resource).toBe(400);
      expect(((await response.json()) as { error: string }).error, resource).toBe('invalid_target');
    }
  });

  it('without resource: the default audience, the issuer (RFC 9068 §3)', async () => {
    const { url, verifier, state } = await authorizeUrl(as, agent.id, []);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    const params = oauth.validateAuthResponse(as, client, new URL(response.headers.location as string), state);
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(agent.secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      ),
    );
    expect(decodeJwt(result.access_token).aud).toBe(as.issuer);
  });
});

describe('RFC 8707 resource indicators required (resource_indicators.required)', () => {
  const REQUIRED = { allowed_resources: [MCP_A, 'https://tools.example.com/'], required: true };
  let broker: TestBroker;
  let as: oauth.AuthorizationServer;
  let agent: { id: string; secret: string };
  let ungranted: string;
  let client: oauth.Client;

  beforeAll(async () => {
    ({ broker, as, agent, ungranted } = await setUp({
      local: { resource_indicators: REQUIRED, token_claims_expression: '{"aud": "https://forged.example.com"}' },
    }));
    client = { client_id: agent.id };
  });

  afterAll(async () => {
    await broker.stop();
  });

  const missing = {
    error: 'invalid_target',
    error_description: 'a resource is required: name the resource the token is for (RFC 8707)',
  };

  it('refuses an authorization request without resource by redirect (invalid_target, with state), before any consent page', async () => {
    for (const agentId of [agent.id, ungranted]) {
      const { location, state } = await authorizeAs(as, agentId, []);
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(Object.fromEntries(location.searchParams)).toEqual({ ...missing, state, iss: as.issuer });
    }
  });

  it("issues a token for a named resource, and for all of the code's resources when the token request names none", async () => {
    const { location, verifier, state } = await authorizeAs(as, agent.id, [MCP_A, MCP_B]);
    const params = oauth.validateAuthResponse(as, client, location, state);
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(agent.secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      ),
    );
    expect(decodeJwt(result.access_token).aud).toEqual([MCP_A, MCP_B]);
    const credentials = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(agent.secret),
        new URLSearchParams({ resource: MCP_A }),
        insecure,
      ),
    );
    expect(decodeJwt(credentials.access_token).aud).toBe(MCP_A);
  });

  it('client_credentials: refuses a request without resource (invalid_target), whatever the claims expression would set', async () => {
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(agent.secret),
      new URLSearchParams(),
      insecure,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(missing);
  });

  it('leaves the client authentication first: a wrong secret without resource is invalid_client', async () => {
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost('wrong'),
      new URLSearchParams(),
      insecure,
    );
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
  });

  describe.each(testBackends())('a code issued without resource before the switch ($name)', (backend) => {
    let stored: Awaited<ReturnType<typeof setUp>>;

    beforeAll(async () => {
      stored = await setUp({ local: { resource_indicators: REQUIRED } }, {}, await backend.storage());
    });

    afterAll(async () => {
      await stored.broker.stop();
    });

    it('is refused at the token request without resource (invalid_target), not turned into a token without aud', async () => {
      // A code stored as the broker stored it before resource_indicators.required was set: no resources.
      const code = oauth.generateRandomState();
      const verifier = oauth.generateRandomCodeVerifier();
      const codes = stored.broker.broker.server('enduser').app.get(AuthorizationCodeRepository);
      const now = new Date();
      await codes.store(
        createHash('sha256').update(code).digest(),
        {
          agentId: stored.agent.id,
          principal: ALICE,
          redirectUri: REDIRECT,
          codeChallenge: await oauth.calculatePKCECodeChallenge(verifier),
          scopes: ['mail.read'],
          resources: [],
          expiresAt: new Date(now.getTime() + 60_000),
        },
        now,
      );
      const storedClient = { client_id: stored.agent.id };
      const location = new URL(`${REDIRECT}?code=${code}&iss=${encodeURIComponent(stored.base)}`);
      const params = oauth.validateAuthResponse(stored.as, storedClient, location, oauth.skipStateCheck);
      const response = await oauth.authorizationCodeGrantRequest(
        stored.as,
        storedClient,
        oauth.ClientSecretBasic(stored.agent.secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(missing);
    });
  });
});

describe('RFC 8707 resource indicators in hybrid mode', () => {
  const UPSTREAM = 'https://upstream.example.com';
  let broker: TestBroker;
  let base: string;
  let local: { id: string; secret: string };
  let proxied: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: {
          mode: 'hybrid',
          cimd: { enabled: true },
          local: { resource_indicators: { allowed_resources: MCP_A } },
          proxy: {
            upstream_issuer_uri: UPSTREAM,
            upstream_authorize_endpoint: `${UPSTREAM}/auth`,
            upstream_token_endpoint: `${UPSTREAM}/token`,
            upstream_jwks_uri: `${UPSTREAM}/jwks`,
            upstream_timeout: '1s',
          },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const id = (await admin.post('/api/agents', { display_name: 'Local', redirect_uris: [REDIRECT] })).json<{
      id: string;
    }>().id;
    local = {
      id,
      secret: (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    proxied = (
      await admin.post('/api/agents', {
        display_name: 'Proxied',
        client_id: 'agent-at-upstream',
        redirect_uris: [REDIRECT],
      })
    ).json<{ id: string }>().id;
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('publishes client_id_metadata_document_supported (CIMD clients are served locally)', async () => {
    expect(
      (await http(`${base}/.well-known/oauth-authorization-server`)).json<Record<string, unknown>>()
        .client_id_metadata_document_supported,
    ).toBe(true);
  });

  it('applies the local policy to local agents', async () => {
    const ask = (resource: string) =>
      http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: local.id,
          client_secret: local.secret,
          resource,
        }).toString(),
      });
    const bound = await ask(MCP_A);
    expect(bound.status).toBe(200);
    expect(decodeJwt(bound.json<{ access_token: string }>().access_token).aud).toBe(MCP_A);
    expect((await ask(MCP_B)).json<{ error: string }>().error).toBe('invalid_target');
  });

  it('forwards the resources of a proxied agent upstream untouched (the upstream binds its tokens)', async () => {
    const as = { issuer: base, authorization_endpoint: `${base}/oauth2/authorize` } as oauth.AuthorizationServer;
    const { url } = await authorizeUrl(as, proxied, [MCP_B, 'http://mcp.example.com/x']);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(response.status).toBe(302);
    const upstream = new URL(response.headers.location as string);
    expect(upstream.origin + upstream.pathname).toBe(`${UPSTREAM}/auth`);
    expect(upstream.searchParams.getAll('resource')).toEqual([MCP_B, 'http://mcp.example.com/x']);
  });
});

describe('resource_indicators.allowed_resources configuration', () => {
  it('stops start-up on an entry that is not an absolute URI', async () => {
    await expect(
      startTestBroker({
        servers: BOTH_SERVERS,
        config: { oauth2_authorization_server: { local: { resource_indicators: { allowed_resources: '/mcp' } } } },
      }),
    ).rejects.toThrow(/oauth2_authorization_server\.local\.resource_indicators\.allowed_resources/);
  });
});
