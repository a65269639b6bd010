import { ApiClient, freePort, http, startTestBroker, type TestBroker } from '@broker/testing';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

describe('OAuth2 authorization server, local mode (driven by oauth4webapi)', () => {
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let admin: ApiClient;
  let alice: ApiClient;
  let confidential: { id: string; secret: string };
  let publicAgent: string;
  let setId: string;
  let serviceId: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } } },
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
    const agent = (
      await admin.post('/api/agents', {
        display_name: 'Confidential',
        redirect_uris: [REDIRECT, 'http://127.0.0.1/native'],
        allowed_scopes: ['mail.read', 'profile'],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    confidential = {
      id: agent,
      secret: (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    publicAgent = (
      await admin.post('/api/agents', {
        display_name: 'Public',
        redirect_uris: [REDIRECT],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    for (const id of [confidential.id, publicAgent])
      await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker.stop();
  });

  async function authorize(
    clientId: string,
    extra: Record<string, string> = {},
  ): Promise<{ location: URL; verifier: string; state: string }> {
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
      ...extra,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(response.status, response.text).toBe(302);
    return { location: new URL(response.headers.location as string), verifier, state };
  }

  it('publishes RFC 8414 metadata with the broker as issuer', async () => {
    const response = await http(`${base}/.well-known/oauth-authorization-server`);
    expect(response.headers['cache-control']).toBe('public, max-age=3600');
    expect(as).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth2/authorize`,
      token_endpoint: `${base}/oauth2/token`,
      jwks_uri: `${base}/oauth2/jwks.json`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
    });
    expect(as.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'client_credentials']));
  });

  it('publishes public keys only, cacheable for 5 minutes', async () => {
    const response = await http(`${base}/oauth2/jwks.json`);
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const { keys } = response.json<{ keys: Record<string, string>[] }>();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys)
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
  });

  it('runs the authorization code flow with PKCE for a confidential client and issues a verifiable JWT', async () => {
    const { location, verifier, state } = await authorize(confidential.id);
    const client: oauth.Client = { client_id: confidential.id };
    const params = oauth.validateAuthResponse(as, client, location, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(confidential.secret),
      params,
      REDIRECT,
      verifier,
      insecure,
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const result = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(result).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'mail.read' });
    const { payload, protectedHeader } = await jwtVerify(
      result.access_token,
      createRemoteJWKSet(new URL(as.jwks_uri as string)),
      { issuer: base },
    );
    expect(payload).toMatchObject({
      sub: ALICE,
      agent_id: confidential.id,
      client_id: confidential.id,
      scope: 'mail.read',
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    // RFC 9068 §3: no resource asked, so the default resource indicator (the issuer, docs/oauth2.md "Default audience").
    expect(payload.aud).toBe(base);
    expect(protectedHeader.typ).toBe('at+jwt');
  });

  it('runs the flow for a public client (no credentials) with PKCE alone', async () => {
    const { location, verifier, state } = await authorize(publicAgent);
    const client: oauth.Client = { client_id: publicAgent, token_endpoint_auth_method: 'none' };
    const params = oauth.validateAuthResponse(as, client, location, state);
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    expect(decodeProtectedHeader(result.access_token).kid).toBeDefined();
  });

  it('issues client_credentials tokens for the agent itself, within allowed_scopes', async () => {
    const client: oauth.Client = { client_id: confidential.id };
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(confidential.secret),
      new URLSearchParams({ scope: 'profile' }),
      insecure,
    );
    const result = await oauth.processClientCredentialsResponse(as, client, response);
    const { payload } = await jwtVerify(result.access_token, createRemoteJWKSet(new URL(as.jwks_uri as string)), {
      issuer: base,
    });
    expect(payload).toMatchObject({ sub: confidential.id, agent_id: confidential.id, scope: 'profile' });

    const denied = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: confidential.id,
        client_secret: confidential.secret,
        scope: 'admin',
      }).toString(),
    });
    expect(denied.status).toBe(400);
    expect(denied.json()).toEqual({
      error: 'invalid_scope',
      error_description: 'a requested scope is not allowed for this client',
    });
    const wrongSecret = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: confidential.id,
        client_secret: 'wrong',
      }).toString(),
    });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.json<{ error: string }>().error).toBe('invalid_client');
    expect(wrongSecret.headers['cache-control']).toBe('no-store');
    // RFC 6749 §5.2: only a client that tried HTTP Basic is challenged.
    expect(wrongSecret.headers['www-authenticate']).toBeUndefined();
    const wrongBasic = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${confidential.id}:wrong`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.json<{ error: string }>().error).toBe('invalid_client');
    expect(wrongBasic.headers['www-authenticate']).toBe('Basic realm="oauth2", charset="UTF-8"');
    const malformedBasic = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic bm8tY29sb24' },
      body: 'grant_type=client_credentials',
    });
    expect(malformedBasic.status).toBe(401);
    expect(malformedBasic.headers['www-authenticate']).toBe('Basic realm="oauth2", charset="UTF-8"');
    const publicClient = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${publicAgent}`,
    });
    expect(publicClient.status).toBe(401);
  });

  describe('code redemption', () => {
    const redeem = (code: string, verifier: string, extra: Record<string, string> = {}) =>
      http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${confidential.id}:${encodeURIComponent(confidential.secret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          ...extra,
        }).toString(),
      });

    it('refuses a replayed code (invalid_grant)', async () => {
      const { location, verifier } = await authorize(confidential.id);
      const code = location.searchParams.get('code') as string;
      expect((await redeem(code, verifier)).status).toBe(200);
      const replay = await redeem(code, verifier);
      expect(replay.status).toBe(400);
      expect(replay.json<{ error: string }>().error).toBe('invalid_grant');
    });

    it('lets exactly one of two concurrent redemptions succeed', async () => {
      const { location, verifier } = await authorize(confidential.id);
      const code = location.searchParams.get('code') as string;
      const results = await Promise.all([redeem(code, verifier), redeem(code, verifier)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    });

    it('refuses a wrong verifier, a malformed verifier and another redirect_uri (invalid_grant)', async () => {
      for (const [verifierFor, extra] of [
        [() => oauth.generateRandomCodeVerifier(), {}],
        [() => 'short', {}],
        [(v: string) => v, { redirect_uri: 'https://agent.example.com/other' }],
      ] as const) {
        const { location, verifier } = await authorize(confidential.id);
        const response = await redeem(location.searchParams.get('code') as string, verifierFor(verifier), extra);
        expect(response.status).toBe(400);
        expect(response.json<{ error: string }>().error).toBe('invalid_grant');
      }
    });
  });

  describe('authorize errors', () => {
    const get = (params: Record<string, string>) => {
      const url = new URL(`${base}/oauth2/authorize`);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    };
    const valid = (): Record<string, string> => ({
      client_id: confidential.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });

    it("answers JSON errors in the spec's order, never redirecting", async () => {
      const cases: [Record<string, string>, string][] = [
        [{ ...valid(), client_id: 'not-a-uuid', redirect_uri: 'https://evil.example.com' }, 'invalid_client'],
        [{ ...valid(), client_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }, 'invalid_client'],
        [{ ...valid(), redirect_uri: 'https://evil.example.com/cb', response_type: 'token' }, 'invalid_redirect_uri'],
        [{ ...valid(), redirect_uri: 'https://agent.example.com/cb/../x' }, 'invalid_redirect_uri'],
        [{ ...valid(), redirect_uri: 'https://AGENT.example.com/cb' }, 'invalid_redirect_uri'],
        [{ ...valid(), redirect_uri: `${REDIRECT}?x=1` }, 'invalid_redirect_uri'],
        [{ ...valid(), redirect_uri: 'https://user@agent.example.com/cb' }, 'invalid_redirect_uri'],
        [{ ...valid(), response_type: 'token', code_challenge: '' }, 'unsupported_response_type'],
        [{ ...valid(), code_challenge: '' }, 'invalid_request'],
        [{ ...valid(), code_challenge_method: 'plain' }, 'invalid_request'],
      ];
      for (const [params, error] of cases) {
        const response = await get(params);
        expect(response.status, JSON.stringify(params)).toBe(400);
        expect(response.headers.location).toBeUndefined();
        expect(response.json<{ error: string }>().error).toBe(error);
      }
      const missingRedirect = valid();
      delete missingRedirect.redirect_uri;
      expect((await get(missingRedirect)).json<{ error: string }>().error).toBe('invalid_redirect_uri');
    });

    it('redirects invalid_scope to the validated redirect_uri with the state and the issuer (RFC 9207)', async () => {
      const response = await get({ ...valid(), scope: 'mail.read admin' });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'invalid_scope',
        error_description: 'a requested scope is not allowed for this client',
        state: 's1',
        iss: base,
      });
    });

    it('accepts any port on a registered loopback redirect (RFC 8252)', async () => {
      const response = await get({ ...valid(), redirect_uri: 'http://127.0.0.1:49152/native' });
      expect(response.status).toBe(302);
      expect(response.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:49152\/native\?code=/);
    });

    it('ends with access_denied (and the state) at the redirect_uri when the user declines consent', async () => {
      const carol = new ApiClient(base, 'carol@example.com');
      const url = new URL(`${base}/oauth2/authorize`);
      for (const [k, v] of Object.entries(valid())) url.searchParams.set(k, v);
      const consent = new URL(
        (await http(url.toString(), { headers: { 'x-remote-user': 'carol@example.com' } })).headers.location as string,
      );
      const token = consent.searchParams.get('session_token') as string;
      const denied = await carol.post(
        `/api/consent/agents/${confidential.id}/deny?session_token=${encodeURIComponent(token)}`,
      );
      expect(denied.status).toBe(200);
      const back = new URL(denied.json<{ data: { redirect_url: string } }>().data.redirect_url);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'access_denied',
        error_description: 'the user denied the authorization request',
        state: 's1',
        iss: base,
      });
      // Only the user of the session can decline it; a bad token is session_expired.
      expect(
        (await alice.post(`/api/consent/agents/${confidential.id}/deny?session_token=${encodeURIComponent(token)}`))
          .status,
      ).toBe(403);
      expect(
        (await carol.post(`/api/consent/agents/${confidential.id}/deny?session_token=garbage`)).json<{
          error: string;
        }>().error,
      ).toBe('session_expired');
      expect((await carol.post(`/api/consent/agents/${confidential.id}/deny`)).json<{ error: string }>().error).toBe(
        'session_expired',
      );
    });

    it("sends a user without a grant to the consent page, and the grant's redirect_url resumes the flow", async () => {
      const bob = new ApiClient(base, 'bob@example.com');
      const url = new URL(`${base}/oauth2/authorize`);
      for (const [k, v] of Object.entries(valid())) url.searchParams.set(k, v);
      const first = await http(url.toString(), { headers: { 'x-remote-user': 'bob@example.com' } });
      expect(first.status).toBe(302);
      const consent = new URL(first.headers.location as string);
      expect(`${consent.origin}${consent.pathname}`).toBe(`https://consent.example.com/agents/${confidential.id}`);
      const token = consent.searchParams.get('session_token') as string;
      const granted = await bob.post(
        `/api/consent/agents/${confidential.id}/grants?session_token=${encodeURIComponent(token)}`,
        { granted_permission_sets: { [setId]: [serviceId] } },
      );
      expect(granted.status).toBe(201);
      const resumeUrl = granted.json<{ redirect_url: string }>().redirect_url;
      expect(resumeUrl).toBe(url.toString());
      const resumed = await http(resumeUrl, { headers: { 'x-remote-user': 'bob@example.com' } });
      expect(resumed.headers.location).toMatch(
        /^https:\/\/agent\.example\.com\/cb\?code=[A-Za-z0-9_-]{43}&state=s1&iss=/,
      );
    });
  });

  describe('token endpoint request rules', () => {
    const post = (body: string, contentType = 'application/x-www-form-urlencoded') =>
      http(`${base}/oauth2/token`, { method: 'POST', headers: { 'content-type': contentType }, body });

    it('refuses another content type, a repeated parameter, an unknown grant type and a body over 256 KiB', async () => {
      const cases: [Promise<Awaited<ReturnType<typeof post>>>, number, string][] = [
        [post('{"grant_type":"client_credentials"}', 'application/json'), 400, 'invalid_request'],
        [post('grant_type=client_credentials&grant_type=authorization_code'), 400, 'invalid_request'],
        [post('grant_type=password&username=a&password=b'), 400, 'unsupported_grant_type'],
        [post(''), 400, 'invalid_request'],
        [post(`grant_type=client_credentials&pad=${'x'.repeat(256 * 1024)}`), 400, 'invalid_request'],
      ];
      for (const [pending, status, error] of cases) {
        const response = await pending;
        expect(response.status).toBe(status);
        expect(response.json<{ error: string }>().error).toBe(error);
        expect(response.headers['cache-control']).toBe('no-store');
      }
    });

    it('never logs client secrets, codes or tokens', () => {
      expect(broker.logs.leaked([confidential.secret])).toEqual([]);
      expect(broker.logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    });
  });
});

describe('local token claims expression', () => {
  it("adds the expression's claims (aud included), never overriding reserved ones", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const expression =
      '{"aud": "https://api.example.com", "tenant": agent.display_name, "grant": request.grant_type, "sub": "forged", "iss": "forged", "scope": "forged"}';
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: { local: { token_claims_expression: expression } },
      },
    });
    try {
      const admin = new ApiClient(broker.url('admin'));
      const agent = (await admin.post('/api/agents', { display_name: 'Claims Agent' })).json<{ id: string }>().id;
      const secret = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret;
      const response = await http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: agent,
          client_secret: secret,
          scope: 'read',
        }).toString(),
      });
      const token = response.json<{ access_token: string }>().access_token;
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${base}/oauth2/jwks.json`)), {
        issuer: base,
        audience: 'https://api.example.com',
      });
      expect(payload).toMatchObject({
        aud: 'https://api.example.com',
        tenant: 'Claims Agent',
        grant: 'client_credentials',
        sub: agent,
        iss: base,
        scope: 'read',
      });
    } finally {
      await broker.stop();
    }
  });

  it('stops start-up naming the key when the expression does not compile', async () => {
    await expect(
      startTestBroker({
        servers: BOTH_SERVERS,
        config: { oauth2_authorization_server: { local: { token_claims_expression: '{"aud": ' } } },
      }),
    ).rejects.toThrow(
      /^config error: oauth2_authorization_server\.local\.token_claims_expression is not a valid CEL expression/,
    );
  });
});

describe('authorize with an unexpected failure', () => {
  it('answers 500 server_error as JSON, with only a reference', async () => {
    const broker = await startTestBroker({ servers: BOTH_SERVERS });
    try {
      const admin = new ApiClient(broker.url('admin'));
      const agent = (await admin.post('/api/agents', { display_name: 'A', redirect_uris: [REDIRECT] })).json<{
        id: string;
      }>().id;
      await broker.broker.runtime.database.close();
      const url = new URL(`${broker.url('enduser')}/oauth2/authorize`);
      for (const [k, v] of Object.entries({
        client_id: agent,
        response_type: 'code',
        redirect_uri: REDIRECT,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
      expect(response.status).toBe(500);
      expect(response.headers.location).toBeUndefined();
      const body = response.json<{ error: string; error_description: string }>();
      expect(body.error).toBe('server_error');
      expect(body.error_description).toMatch(/^internal error \(ref [0-9a-f]{32}\)$/);
    } finally {
      await broker.stop();
    }
  });
});
