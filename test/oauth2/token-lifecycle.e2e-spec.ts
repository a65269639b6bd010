import { randomBytes, randomUUID } from 'node:crypto';
import {
  ApiClient,
  freePort,
  FrozenClock,
  http,
  startJwtIssuer,
  startTestBroker,
  testBackends,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ACTOR_AUDIENCE = 'https://ops.example.com';
const insecure = { [oauth.allowInsecureRequests]: true };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** An unsigned JWT, as an impersonation rule with `verification: none` takes for the subject. */
function unsigned(claims: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: now, exp: now + 300, ...claims })}.`;
}

/**
 * RFC 7009 revocation and RFC 7662 introspection on the local authorization server, driven
 * by oauth4webapi, on both database backends (on PostgreSQL the introspection's state is
 * kept in memory and dropped by notifications: every answer here comes right after the
 * change it depends on).
 */
describe.each(testBackends())('token revocation and introspection on $name', (backend) => {
  let broker: TestBroker;
  let gateway: TestJwtIssuer;
  let clock: FrozenClock;
  let base: string;
  let as: oauth.AuthorizationServer;
  let admin: ApiClient;
  let alice: ApiClient;
  let setId: string;
  let serviceId: string;
  let agentA: { id: string; secret: string };
  let agentB: { id: string; secret: string };
  let publicAgent: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    clock = new FrozenClock(new Date());
    gateway = await startJwtIssuer('ES256');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
        token_exchange: { client_assertion: { issuer_uri: gateway.issuer, jwks_uri: gateway.jwksUri } },
        oauth2_authorization_server: {
          impersonation: {
            audience_prefix: `${base}/impersonation`,
            rules: [
              {
                name: 'kiosk',
                roles: { actor: { expected_audience: ACTOR_AUDIENCE }, subject: { verification: 'none' } },
                trusted_issuers: [
                  {
                    issuer_uri: gateway.issuer,
                    jwks_uri: gateway.jwksUri,
                    allowed_algorithms: ['ES256'],
                    signs_roles: ['client_assertion', 'actor'],
                  },
                ],
                authorization: {
                  cel: { expression: 'client_assertion.sub == "gateway" && subject_token.sub == "alice@example.com"' },
                },
              },
            ],
          },
        },
      },
    });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
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
    const confidential = async (name: string): Promise<{ id: string; secret: string }> => {
      const id = (
        await admin.post('/api/agents', {
          display_name: name,
          redirect_uris: [REDIRECT],
          allowed_scopes: ['mail.read', 'profile', 'offline_access'],
          permission_sets: [{ permission_set_id: setId }],
        })
      ).json<{ id: string }>().id;
      const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret;
      secrets.push(secret);
      return { id, secret };
    };
    agentA = await confidential('Agent A');
    agentB = await confidential('Agent B');
    publicAgent = (
      await admin.post('/api/agents', {
        display_name: 'Public',
        redirect_uris: [REDIRECT],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    for (const id of [agentA.id, publicAgent]) expect((await grant(id)).status).toBe(201);
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker?.stop();
    await gateway?.stop();
  });

  const grant = (agentId: string) =>
    alice.post(`/api/consent/agents/${agentId}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
  const remember = (token: string): string => {
    secrets.push(token);
    return token;
  };
  const basic = (client: { secret: string }) => oauth.ClientSecretBasic(client.secret);
  /** The gateway's client authentication: its client assertion (RFC 7523) in the form. */
  const gatewayAuth = (): oauth.ClientAuth => {
    return async (_as, _client, body) => {
      body.set('client_assertion_type', JWT_BEARER);
      body.set(
        'client_assertion',
        remember(await gateway.sign({ sub: 'gateway' }, { audience: base, ttlSeconds: 3600 })),
      );
    };
  };

  async function introspect(
    client: string,
    auth: oauth.ClientAuth,
    token: string,
  ): Promise<oauth.IntrospectionResponse> {
    const response = await oauth.introspectionRequest(as, { client_id: client }, auth, token, insecure);
    expect(response.headers.get('cache-control')).toBe('no-store');
    return oauth.processIntrospectionResponse(as, { client_id: client }, response);
  }
  const introspectAsA = (token: string) => introspect(agentA.id, basic(agentA), token);
  const introspectAsGateway = (token: string) => introspect('gateway', gatewayAuth(), token);

  async function revoke(client: string, auth: oauth.ClientAuth, token: string, hint?: string): Promise<Response> {
    const response = await oauth.revocationRequest(as, { client_id: client }, auth, token, {
      ...insecure,
      ...(hint === undefined ? {} : { additionalParameters: { token_type_hint: hint } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.clone().text()).toBe('');
    await oauth.processRevocationResponse(response);
    return response;
  }

  async function clientCredentials(client: { id: string; secret: string }): Promise<string> {
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      { client_id: client.id },
      oauth.ClientSecretPost(client.secret),
      new URLSearchParams({ scope: 'profile' }),
      insecure,
    );
    return remember(
      (await oauth.processClientCredentialsResponse(as, { client_id: client.id }, response)).access_token,
    );
  }

  /** A person's token through the authorization code flow with PKCE. */
  async function codeFlow(
    clientId: string,
    auth: oauth.ClientAuth,
    scope = 'mail.read',
  ): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const redirect = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(redirect.status, redirect.text).toBe(302);
    const client: oauth.Client = { client_id: clientId };
    const callback = oauth.validateAuthResponse(as, client, new URL(redirect.headers.location as string), state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      callback,
      REDIRECT,
      verifier,
      insecure,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response);
    remember(result.access_token);
    return result;
  }
  const personToken = async (clientId: string, auth: oauth.ClientAuth): Promise<string> =>
    (await codeFlow(clientId, auth)).access_token;

  /** Claims of a JWT (not verified: the broker's own token, read by the test). */
  const claimsOf = (jwt: string): Record<string, unknown> =>
    JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;

  /** A refresh token family of Alice's grant to agent A (`offline_access`), and the access token issued with it (its `sid`). */
  async function family(): Promise<{ familyId: string; refresh: string; access: string }> {
    const result = await codeFlow(agentA.id, basic(agentA), 'mail.read offline_access');
    expect(result.refresh_token).toBeDefined();
    const familyId = claimsOf(result.access_token).sid as string;
    expect(familyId).toMatch(/^[0-9a-f-]{36}$/);
    return { familyId, refresh: remember(result.refresh_token as string), access: result.access_token };
  }

  /** Uses the refresh token (RFC 6749 §6): its successor, and the new access token (same family). */
  async function rotate(refresh: string): Promise<{ refresh: string; access: string }> {
    const response = await oauth.refreshTokenGrantRequest(
      as,
      { client_id: agentA.id },
      basic(agentA),
      refresh,
      insecure,
    );
    const result = await oauth.processRefreshTokenResponse(as, { client_id: agentA.id }, response);
    return { refresh: remember(result.refresh_token as string), access: remember(result.access_token) };
  }

  async function events(
    type: string,
  ): Promise<
    { details: Record<string, unknown>; principal: string | null; agent_id: string | null; actor: unknown }[]
  > {
    await broker.broker.runtime.database.events.flush();
    return (await admin.get(`/api/events?type=${type}`)).json<{
      items: { details: Record<string, unknown>; principal: string | null; agent_id: string | null; actor: unknown }[];
    }>().items;
  }

  it('advertises both endpoints and their client authentication methods (RFC 8414)', () => {
    expect(as).toMatchObject({
      revocation_endpoint: `${base}/oauth2/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint: `${base}/oauth2/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      scopes_supported: ['offline_access'],
    });
  });

  it('introspects a token for the agent it was issued to with every field, and for the gateway', async () => {
    const token = await personToken(agentA.id, basic(agentA));
    const claims = claimsOf(token);
    const expected = {
      active: true,
      scope: 'mail.read',
      client_id: agentA.id,
      sub: ALICE,
      exp: claims.exp,
      iat: claims.iat,
      iss: base,
      // No resource was asked: the default audience, the issuer (RFC 9068 §3).
      aud: base,
      jti: claims.jti,
      token_type: 'Bearer',
    };
    expect(await introspectAsA(token)).toEqual(expected);
    // Twice: the second answer may come from memory and must be the same.
    expect(await introspect(agentA.id, oauth.ClientSecretPost(agentA.secret), token)).toEqual(expected);
    expect(await introspectAsGateway(token)).toEqual(expected);
  });

  it('answers exactly the inactive answer to another agent, whatever the token', async () => {
    const token = await clientCredentials(agentA);
    expect(await introspectAsA(token)).toMatchObject({
      active: true,
      sub: agentA.id,
      client_id: agentA.id,
      scope: 'profile',
    });
    for (const probe of [token, 'not-a-token', 'a.b.c', remember(randomBytes(32).toString('base64url'))]) {
      expect(await introspect(agentB.id, basic(agentB), probe)).toEqual({ active: false });
    }
  });

  it('refuses a caller that is not a confidential client or the gateway (401 invalid_client)', async () => {
    const token = await clientCredentials(agentA);
    const anonymous = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ token }).toString(),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json()).toMatchObject({ error: 'invalid_client' });
    const publicClient = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ token, client_id: publicAgent }).toString(),
    });
    expect(publicClient.status).toBe(401);
    const wrongBasic = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: { ...FORM, authorization: `Basic ${Buffer.from(`${agentA.id}:wrong`).toString('base64')}` },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.headers['www-authenticate']).toBe('Basic realm="oauth2", charset="UTF-8"');
    expect(wrongBasic.headers['cache-control']).toBe('no-store');
    const badAssertion = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ token, client_assertion_type: JWT_BEARER, client_assertion: 'a.b.c' }).toString(),
    });
    expect(badAssertion.status).toBe(401);
    expect(badAssertion.json()).toMatchObject({ error: 'invalid_client' });
    const missing = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({ client_id: agentA.id, client_secret: agentA.secret }).toString(),
    });
    expect(missing.status).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('revokes an access token: inactive at once, recorded as access_token.revoked', async () => {
    const token = await personToken(agentA.id, basic(agentA));
    expect((await introspectAsA(token)).active).toBe(true);
    await revoke(agentA.id, basic(agentA), token, 'access_token');
    expect(await introspectAsA(token)).toEqual({ active: false });
    expect(await introspectAsGateway(token)).toEqual({ active: false });
    const jti = claimsOf(token).jti as string;
    expect(await events('access_token.revoked')).toContainEqual(
      expect.objectContaining({
        details: { jti },
        principal: ALICE,
        agent_id: agentA.id,
        actor: { type: 'agent', id: agentA.id },
      }),
    );
    // Revoking it again is still 200 (RFC 7009 §2.2), and a wrong hint is ignored (§2.1).
    await revoke(agentA.id, oauth.ClientSecretPost(agentA.secret), token, 'refresh_token');
  });

  it('lets a public client revoke its own token by client_id alone', async () => {
    const token = await personToken(publicAgent, oauth.None());
    await revoke(publicAgent, oauth.None(), token);
    expect(await introspectAsGateway(token)).toEqual({ active: false });
  });

  it('revokes the whole refresh token family: its other tokens and the access tokens carrying it as sid', async () => {
    const { familyId, refresh, access } = await family();
    const current = await rotate(refresh);
    expect(await introspectAsA(current.refresh)).toMatchObject({
      active: true,
      client_id: agentA.id,
      sub: ALICE,
      scope: 'mail.read offline_access',
      token_type: 'refresh_token',
      iss: base,
    });
    expect(await introspectAsA(refresh)).toEqual({ active: false });
    for (const token of [access, current.access]) expect((await introspectAsA(token)).active).toBe(true);
    // The rotated (older) token names the family too.
    await revoke(agentA.id, basic(agentA), refresh, 'refresh_token');
    expect(await introspectAsA(current.refresh)).toEqual({ active: false });
    for (const token of [access, current.access]) {
      expect(await introspectAsA(token)).toEqual({ active: false });
      expect(await introspectAsGateway(token)).toEqual({ active: false });
    }
    expect(await events('refresh_token.revoked')).toContainEqual(
      expect.objectContaining({
        details: { family_id: familyId },
        principal: ALICE,
        agent_id: agentA.id,
        actor: { type: 'agent', id: agentA.id },
      }),
    );
  });

  it('answers inactive for the family once a reuse revoked it', async () => {
    const { refresh, access } = await family();
    const current = await rotate(refresh);
    // Past the reuse grace (docs/oauth2.md "Token lifecycle"): a second presentation is a reuse.
    clock.advance(6_000);
    const reuse = await oauth.refreshTokenGrantRequest(as, { client_id: agentA.id }, basic(agentA), refresh, insecure);
    expect(reuse.status).toBe(400);
    for (const token of [current.refresh, current.access, access])
      expect(await introspectAsA(token)).toEqual({ active: false });
  });

  it('keeps the family when only its access token is revoked', async () => {
    const { refresh, access } = await family();
    await revoke(agentA.id, basic(agentA), access);
    expect(await introspectAsA(access)).toEqual({ active: false });
    expect((await introspectAsA(refresh)).active).toBe(true);
  });

  it('answers 200 and changes nothing for an unknown or malformed token, or a token of another client', async () => {
    for (const token of ['unknown', 'a.b.c', randomBytes(32).toString('base64url'), 'eyJhbGciOiJub25lIn0.e30.'])
      await revoke(agentA.id, basic(agentA), token);
    const theirs = await clientCredentials(agentA);
    const { refresh } = await family();
    await revoke(agentB.id, basic(agentB), theirs);
    await revoke(agentB.id, basic(agentB), refresh, 'refresh_token');
    await revoke(publicAgent, oauth.None(), theirs);
    expect((await introspectAsA(theirs)).active).toBe(true);
    expect((await introspectAsA(refresh)).active).toBe(true);
  });

  it('refuses bad client credentials (401, challenged after Basic) and a missing or repeated token (400)', async () => {
    const send = (body: string, headers: Record<string, string> = {}) =>
      http(`${base}/oauth2/revoke`, { method: 'POST', headers: { ...FORM, ...headers }, body });
    const wrong = await send('token=x', {
      authorization: `Basic ${Buffer.from(`${agentA.id}:wrong`).toString('base64')}`,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'invalid_client' });
    expect(wrong.headers['www-authenticate']).toBe('Basic realm="oauth2", charset="UTF-8"');
    const post = await send(
      new URLSearchParams({ token: 'x', client_id: agentA.id, client_secret: 'wrong' }).toString(),
    );
    expect(post.status).toBe(401);
    expect(post.headers['www-authenticate']).toBeUndefined();
    expect((await send('token=x')).status).toBe(401);
    expect((await send(new URLSearchParams({ token: 'x', client_id: randomUUID() }).toString())).status).toBe(401);
    const missing = await send(new URLSearchParams({ client_id: publicAgent }).toString());
    expect(missing.status).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'invalid_request' });
    const repeated = await send(`token=a&token=b&client_id=${publicAgent}`);
    expect(repeated.status).toBe(400);
    expect(repeated.json()).toMatchObject({ error: 'invalid_request' });
    expect(repeated.headers['cache-control']).toBe('no-store');
  });

  it('answers the same through the ordinary route (a query string misses the hot route)', async () => {
    const token = await clientCredentials(agentA);
    const authorization = `Basic ${Buffer.from(`${agentA.id}:${agentA.secret}`).toString('base64')}`;
    const introspectOn = (path: string) =>
      http(`${base}${path}`, {
        method: 'POST',
        headers: { ...FORM, authorization },
        body: new URLSearchParams({ token }).toString(),
      });
    const hot = await introspectOn('/oauth2/introspect');
    const ordinary = await introspectOn('/oauth2/introspect?via=express');
    expect(ordinary.status).toBe(200);
    expect(ordinary.json()).toEqual(hot.json());
    expect(ordinary.headers['cache-control']).toBe('no-store');
    const revoked = await http(`${base}/oauth2/revoke?via=express`, {
      method: 'POST',
      headers: { ...FORM, authorization },
      body: new URLSearchParams({ token }).toString(),
    });
    expect([revoked.status, revoked.text, revoked.headers['cache-control']]).toEqual([200, '', 'no-store']);
    expect((await introspectOn('/oauth2/introspect?via=express')).json()).toEqual({ active: false });
    const refused = await http(`${base}/oauth2/revoke?via=express`, {
      method: 'POST',
      headers: { ...FORM, authorization: `Basic ${Buffer.from(`${agentA.id}:wrong`).toString('base64')}` },
      body: 'token=x',
    });
    expect([refused.status, refused.headers['www-authenticate'], refused.json<{ error: string }>().error]).toEqual([
      401,
      'Basic realm="oauth2", charset="UTF-8"',
      'invalid_client',
    ]);
  });

  it('carries act for an impersonation token', async () => {
    const form = new URLSearchParams({
      grant_type: EXCHANGE,
      audience: `${base}/impersonation/${agentA.id}`,
      client_assertion_type: JWT_BEARER,
      client_assertion: remember(await gateway.sign({ sub: 'gateway' }, { audience: base })),
      actor_token_type: JWT_TYPE,
      actor_token: remember(await gateway.sign({ sub: 'ops-1' }, { audience: ACTOR_AUDIENCE })),
      subject_token_type: JWT_TYPE,
      subject_token: unsigned({ sub: ALICE }),
      scope: 'mail.read',
    });
    const issued = await http(`${base}/oauth2/token`, { method: 'POST', headers: FORM, body: form.toString() });
    expect(issued.status, issued.text).toBe(200);
    const token = remember(issued.json<{ access_token: string }>().access_token);
    expect(await introspectAsGateway(token)).toMatchObject({
      active: true,
      sub: ALICE,
      client_id: agentA.id,
      act: { iss: gateway.issuer, sub: 'ops-1' },
    });
  });

  it('answers inactive once the person revokes the grant, and for tokens issued before it was granted again', async () => {
    const token = await personToken(agentA.id, basic(agentA));
    const own = await clientCredentials(agentA);
    expect((await introspectAsA(token)).active).toBe(true);
    expect((await alice.delete(`/api/consent/agents/${agentA.id}/grants`)).status).toBe(204);
    expect(await introspectAsA(token)).toEqual({ active: false });
    // The agent's own token does not depend on a person's grant.
    expect((await introspectAsA(own)).active).toBe(true);
    clock.advance(2_000);
    expect((await grant(agentA.id)).status).toBe(201);
    expect(await introspectAsA(token)).toEqual({ active: false });
    expect((await introspectAsA(await personToken(agentA.id, basic(agentA)))).active).toBe(true);
  });

  it("answers inactive once the person's grant has expired (valid_until, judged by the clock on every answer)", async () => {
    const validUntil = new Date(clock.nowMs() + 10 * 60_000).toISOString();
    expect(
      (
        await alice.post(`/api/consent/agents/${publicAgent}/grants`, {
          granted_permission_sets: { [setId]: [serviceId] },
          valid_until: validUntil,
        })
      ).status,
    ).toBe(201);
    const token = await personToken(publicAgent, oauth.None());
    expect((await introspectAsGateway(token)).active).toBe(true);
    expect((await introspectAsGateway(token)).active).toBe(true);
    clock.advance(11 * 60_000);
    expect(await introspectAsGateway(token)).toEqual({ active: false });
  });

  it('answers inactive once the agent is deleted', async () => {
    const doomed = (await admin.post('/api/agents', { display_name: 'Doomed', allowed_scopes: ['profile'] })).json<{
      id: string;
    }>().id;
    const secret = (await admin.post(`/api/agents/${doomed}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    secrets.push(secret);
    const token = await clientCredentials({ id: doomed, secret });
    expect((await introspectAsGateway(token)).active).toBe(true);
    expect((await admin.delete(`/api/agents/${doomed}`)).status).toBe(204);
    expect(await introspectAsGateway(token)).toEqual({ active: false });
  });

  it('answers inactive once the token has expired', async () => {
    const token = await clientCredentials(agentA);
    expect((await introspectAsA(token)).active).toBe(true);
    clock.advance(3_600_000);
    expect(await introspectAsA(token)).toEqual({ active: false });
  });

  it('never logs a token, secret or assertion', () => {
    expect(broker.logs.leaked(secrets)).toEqual([]);
    expect(broker.logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  });
});
