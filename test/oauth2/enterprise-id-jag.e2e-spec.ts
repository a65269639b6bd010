import {
  ApiClient,
  eventually,
  freePort,
  startEnterpriseIdp,
  startTestBroker,
  testBackends,
  type EnterpriseIdpClient,
  type TestBroker,
  type TestEnterpriseIdp,
} from '@broker/testing';
import {
  Client,
  CrossAppAccessProvider,
  discoverAndRequestJwtAuthGrant,
  requestJwtAuthorizationGrant,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { calculateJwkThumbprint, createRemoteJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_SCOPE } from '../support/mcp-server';
import { startExampleMcpServer, type ExampleMcpServer } from '../support/example-mcp-server';
import { BOTH_SERVERS } from '../support/servers';

/**
 * Enterprise-managed authorization (docs/oauth2.md "Enterprise-managed authorization"): an
 * enterprise IdP on loopback (jose-signed) exchanges a person's ID token for an Identity
 * Assertion JWT Authorization Grant, which a confidential agent presents on the JWT bearer grant.
 * The client is the official MCP SDK's cross-app access support where it does the whole flow,
 * and oauth4webapi's generic grant request where a test needs one request and its exact answer.
 * The token calls the MCP server of examples/mcp.
 */

const ALICE = 'alice@example.com';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_JAG_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';
const IDP_CLIENT = 'mcp-desktop';
const IDP_SECRET = 'idp-client-secret';
const insecure = { [oauth.allowInsecureRequests]: true };

interface Agent {
  readonly id: string;
  readonly secret: string;
}

describe.each(testBackends())('enterprise-managed authorization: ID-JAG on the JWT bearer grant ($name)', (backend) => {
  let broker: TestBroker;
  let base: string;
  let idp: TestEnterpriseIdp;
  let discovered: TestEnterpriseIdp;
  let untrusted: TestEnterpriseIdp;
  let as: oauth.AuthorizationServer;
  let admin: ApiClient;
  let alice: ApiClient;
  let agent: Agent;
  let other: Agent;
  let publicAgent: string;
  let mcpUrl: string;
  let unregisteredUrl: string;
  let example: ExampleMcpServer | undefined;
  const idpClients: Record<string, EnterpriseIdpClient> = {};

  async function confidentialAgent(name: string): Promise<Agent> {
    const created = await admin.post('/api/agents', { display_name: name, allowed_scopes: [MCP_SCOPE, 'mcp:admin'] });
    expect(created.status, created.text).toBe(201);
    const id = created.json<{ id: string }>().id;
    const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    return { id, secret };
  }

  beforeAll(async () => {
    idp = await startEnterpriseIdp(idpClients);
    discovered = await startEnterpriseIdp({});
    untrusted = await startEnterpriseIdp({});
    const [port, mcpPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
    unregisteredUrl = `http://127.0.0.1:${mcpPort}/other`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
        oauth2_authorization_server: {
          enterprise: {
            trusted_issuers: [
              { issuer_uri: idp.issuer, jwks_uri: idp.jwksUri },
              { issuer_uri: discovered.issuer, discovery: true, principal_expression: "'erin@' + id_jag.sub" },
            ],
            max_assertion_lifetime: '10m',
          },
        },
      },
    });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
    const resource = await admin.post('/api/resources', {
      display_name: 'Example MCP',
      resource_uri: mcpUrl,
      scopes: [{ scope: MCP_SCOPE, description: 'Use the tools' }],
    });
    expect(resource.status, resource.text).toBe(201);
    agent = await confidentialAgent('Desktop MCP client');
    other = await confidentialAgent('Another client');
    publicAgent = (
      await admin.post('/api/agents', { display_name: 'Public', redirect_uris: ['https://a.example/cb'] })
    ).json<{ id: string }>().id;
    idpClients[IDP_CLIENT] = { secret: IDP_SECRET, brokerClientId: agent.id };
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    example = await startExampleMcpServer({ port: mcpPort, broker: base, url: mcpUrl });
  });

  afterAll(async () => {
    await example?.stop();
    await broker?.stop();
    await Promise.all([idp?.stop(), discovered?.stop(), untrusted?.stop()]);
  });

  /** A valid ID-JAG of the trusted IdP for `agent`, the example MCP server and its scope; `overrides` change it. */
  const idJag = (overrides: Parameters<TestEnterpriseIdp['signIdJag']>[0] = {}, signer: TestEnterpriseIdp = idp) =>
    signer.signIdJag({
      sub: ALICE,
      audience: base,
      clientId: agent.id,
      resource: mcpUrl,
      scope: MCP_SCOPE,
      ...overrides,
    });

  /** One JWT bearer grant request (oauth4webapi), as `client` authenticates (Basic by default). */
  const grant = (
    assertion: string,
    options: {
      client?: Agent;
      auth?: oauth.ClientAuth;
      params?: Record<string, string>;
      DPoP?: oauth.DPoPHandle;
    } = {},
  ): Promise<Response> => {
    const client = options.client ?? agent;
    return oauth.genericTokenEndpointRequest(
      as,
      { client_id: client.id },
      options.auth ?? oauth.ClientSecretBasic(client.secret),
      JWT_BEARER,
      { assertion, ...options.params },
      { ...insecure, DPoP: options.DPoP },
    );
  };

  /** The refusal's status and OAuth error code (read as sent, whatever oauth4webapi would make of it). */
  const refusal = async (response: Response) => {
    const body = (await response.json()) as { error: string; error_description: string };
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    return { status: response.status, error: body.error, description: body.error_description };
  };

  const introspect = async (token: string) =>
    (
      await fetch(`${base}/oauth2/introspect`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${agent.id}:${agent.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token }).toString(),
      })
    ).json() as Promise<Record<string, unknown>>;

  const callWhoami = (token: string) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    });

  it('publishes the JWT bearer grant and the ID-JAG profile, never which IdPs it trusts', () => {
    expect(as.grant_types_supported).toContain(JWT_BEARER);
    expect(as.authorization_grant_profiles_supported).toEqual([ID_JAG_PROFILE]);
    expect(JSON.stringify(as)).not.toContain(idp.issuer);
  });

  it("the official MCP SDK's cross-app access: the IdP's ID-JAG buys a token that calls the example MCP server's whoami", async () => {
    const exchangesBefore = idp.exchanges.length;
    const authProvider = new CrossAppAccessProvider({
      expectedIssuer: base,
      clientId: agent.id,
      clientSecret: agent.secret,
      assertion: async (context) =>
        (
          await discoverAndRequestJwtAuthGrant({
            idpUrl: idp.issuer,
            audience: context.authorizationServerUrl,
            resource: context.resourceUrl,
            scope: context.scope,
            idToken: await idp.idToken(ALICE, IDP_CLIENT),
            clientId: IDP_CLIENT,
            clientSecret: IDP_SECRET,
            fetchFn: context.fetchFn,
          })
        ).jwtAuthGrant,
    });
    const client = new Client({ name: 'xaa-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider }));
    try {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(result.content).toEqual([
        {
          type: 'text',
          text: expect.stringMatching(new RegExp(`^You are ${ALICE} via agent ${agent.id}; it is `)) as unknown,
        },
      ]);
    } finally {
      await client.close();
    }
    // The IdP was asked for an ID-JAG for this broker and this MCP server, by the SDK.
    expect(idp.exchanges.slice(exchangesBefore)).toEqual([{ audience: base, resource: mcpUrl, scope: MCP_SCOPE }]);
    const tokens = authProvider.tokens();
    expect(tokens?.refresh_token).toBeUndefined();
    expect(tokens?.token_type).toBe('Bearer');
    const claims = decodeJwt(tokens?.access_token as string);
    expect(claims).toMatchObject({ iss: base, sub: ALICE, aud: mcpUrl, client_id: agent.id, scope: MCP_SCOPE });
    expect(claims.sid).toEqual(expect.any(String));
  });

  it('oauth4webapi, Basic then post: a token for the named person and MCP server, no refresh token, active on introspection', async () => {
    for (const auth of [oauth.ClientSecretBasic(agent.secret), oauth.ClientSecretPost(agent.secret)]) {
      const { jwtAuthGrant } = await requestJwtAuthorizationGrant({
        tokenEndpoint: `${idp.issuer}/token`,
        audience: base,
        resource: mcpUrl,
        scope: MCP_SCOPE,
        idToken: await idp.idToken(ALICE, IDP_CLIENT),
        clientId: IDP_CLIENT,
        clientSecret: IDP_SECRET,
      });
      const response = await grant(jwtAuthGrant, { auth, params: { resource: mcpUrl, scope: MCP_SCOPE } });
      expect(response.headers.get('cache-control')).toBe('no-store');
      const tokens = await oauth.processGenericTokenEndpointResponse(as, { client_id: agent.id }, response);
      expect(tokens).toMatchObject({ token_type: 'bearer', scope: MCP_SCOPE, resource: mcpUrl });
      expect(tokens.refresh_token).toBeUndefined();
      const { payload } = await jwtVerify(
        tokens.access_token,
        createRemoteJWKSet(new URL(`${base}/oauth2/jwks.json`)),
        {
          issuer: base,
          audience: mcpUrl,
          typ: 'at+jwt',
        },
      );
      expect(payload).toMatchObject({ sub: ALICE, client_id: agent.id, agent_id: agent.id, scope: MCP_SCOPE });
      expect(await introspect(tokens.access_token)).toMatchObject({
        active: true,
        sub: ALICE,
        client_id: agent.id,
        aud: mcpUrl,
        scope: MCP_SCOPE,
        token_type: 'Bearer',
      });
      // The token calls the example MCP server.
      const called = await callWhoami(tokens.access_token);
      expect(called.status).toBe(200);
      expect(await called.text()).toContain(`You are ${ALICE} via agent ${agent.id}`);
    }
    // No consent grant was needed, and none was made.
    const grants = await alice.get(`/api/consent/agents/${agent.id}/grants`);
    expect(grants.status, grants.text).toBe(200);
    expect(grants.json<{ data: unknown[] }>().data).toEqual([]);
  });

  it('refuses each check the draft and the MCP extension require, issuing nothing', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, () => Promise<Response>, number, string][] = [
      ['wrong typ (JWT)', async () => grant(await idJag({ typ: 'JWT' })), 400, 'invalid_grant'],
      ['no typ', async () => grant(await idJag({ typ: null })), 400, 'invalid_grant'],
      [
        'aud another authorization server',
        async () => grant(await idJag({ audience: 'https://as.example.com' })),
        400,
        'invalid_grant',
      ],
      [
        'aud with two audiences',
        async () => grant(await idJag({ audience: [base, 'https://as.example.com'] })),
        400,
        'invalid_grant',
      ],
      ["another client's ID-JAG", async () => grant(await idJag({ clientId: other.id })), 400, 'invalid_grant'],
      ['presented by the other client', async () => grant(await idJag(), { client: other }), 400, 'invalid_grant'],
      ['untrusted issuer', async () => grant(await idJag({}, untrusted)), 400, 'invalid_grant'],
      [
        "a trusted issuer's name, another IdP's key",
        async () => grant(await idJag({ claims: { iss: idp.issuer } }, untrusted)),
        400,
        'invalid_grant',
      ],
      ['expired', async () => grant(await idJag({ iat: now - 700, ttlSeconds: 300 })), 400, 'invalid_grant'],
      ['issued in the future', async () => grant(await idJag({ iat: now + 600 })), 400, 'invalid_grant'],
      [
        'lives longer than max_assertion_lifetime',
        async () => grant(await idJag({ ttlSeconds: 3600 })),
        400,
        'invalid_grant',
      ],
      ['no jti', async () => grant(await idJag({ claims: { jti: undefined } })), 400, 'invalid_grant'],
      ['no resource', async () => grant(await idJag({ resource: undefined })), 400, 'invalid_grant'],
      [
        'a resource that is not registered',
        async () => grant(await idJag({ resource: unregisteredUrl })),
        400,
        'invalid_grant',
      ],
      [
        'a scope the resource does not offer',
        async () => grant(await idJag({ scope: `${MCP_SCOPE} mcp:admin` })),
        400,
        'invalid_grant',
      ],
      [
        'a requested resource the ID-JAG does not name',
        async () => grant(await idJag(), { params: { resource: unregisteredUrl } }),
        400,
        'invalid_target',
      ],
      [
        'a requested scope beyond the ID-JAG',
        async () => grant(await idJag({ scope: undefined }), { params: { scope: MCP_SCOPE } }),
        400,
        'invalid_scope',
      ],
      [
        'a DPoP-bound ID-JAG (cnf.jkt) without a proof',
        async () => grant(await idJag({ claims: { cnf: { jkt: 'x'.repeat(43) } } })),
        400,
        'invalid_grant',
      ],
      ['not a JWT', () => grant('not-a-jwt'), 400, 'invalid_grant'],
      [
        'a wrong client secret',
        async () => grant(await idJag(), { auth: oauth.ClientSecretBasic('wrong') }),
        401,
        'invalid_client',
      ],
      [
        'a public client',
        async () =>
          grant(await idJag({ clientId: publicAgent }), {
            client: { id: publicAgent, secret: '' },
            auth: oauth.None(),
          }),
        401,
        'invalid_client',
      ],
    ];
    for (const [name, send, status, error] of cases) {
      const answer = await refusal(await send());
      expect({ name, status: answer.status, error: answer.error }).toEqual({ name, status, error });
      expect(answer.description, name).not.toMatch(/eyJ/);
    }
    // Refusals of a verified ID-JAG by an authenticated agent are in the person's activity.
    const events = await eventually(
      async () =>
        (await alice.get('/api/activity?type=enterprise_access.decided')).json<{
          data: { outcome: string; details: { oauth_error: string | null } }[];
        }>().data,
      (data) => data.some((event) => event.details.oauth_error === 'invalid_scope'),
    );
    expect(events.filter((event) => event.outcome === 'failure').map((event) => event.details.oauth_error)).toEqual(
      expect.arrayContaining(['invalid_grant', 'invalid_target', 'invalid_scope']),
    );
  });

  it('spends each jti once (a replay is invalid_grant), and a refused request leaves it unspent', async () => {
    const assertion = await idJag();
    // Refused for its request (scope), before the jti is spent: the same ID-JAG still works once.
    expect((await refusal(await grant(assertion, { params: { scope: 'mcp:admin' } }))).error).toBe('invalid_scope');
    expect((await grant(assertion)).status).toBe(200);
    const replay = await refusal(await grant(assertion));
    expect(replay).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(replay.description).toMatch(/used already/);
    // Presented five times at once (on PostgreSQL over several pooled connections): exactly one token.
    const raced = await idJag();
    const statuses = await Promise.all(Array.from({ length: 5 }, async () => (await grant(raced)).status));
    expect(statuses.sort()).toEqual([200, 400, 400, 400, 400]);
  });

  it('binds the token to a DPoP proof, and an ID-JAG with cnf.jkt to that key only (draft §8.6.1)', async () => {
    const key = await generateKeyPair('ES256', { extractable: true });
    const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256');
    const DPoP = oauth.DPoP({ client_id: agent.id } as oauth.Client, key);
    const bound = await grant(await idJag({ claims: { cnf: { jkt } } }), { DPoP });
    const tokens = await oauth.processGenericTokenEndpointResponse(as, { client_id: agent.id }, bound);
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    const otherKey = oauth.DPoP(
      { client_id: agent.id } as oauth.Client,
      await generateKeyPair('ES256', { extractable: true }),
    );
    const refused = await refusal(await grant(await idJag({ claims: { cnf: { jkt } } }), { DPoP: otherKey }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
  });

  it('reads keys from a discovered IdP, and maps the person by principal_expression', async () => {
    idpClients['discovered-client'] = { secret: 's', brokerClientId: agent.id };
    const assertion = await discovered.signIdJag({
      sub: 'e123',
      audience: base,
      clientId: agent.id,
      resource: mcpUrl,
      scope: MCP_SCOPE,
    });
    const tokens = await oauth.processGenericTokenEndpointResponse(as, { client_id: agent.id }, await grant(assertion));
    expect(decodeJwt(tokens.access_token).sub).toBe('erin@e123');
  });

  it('the person sees and revokes what the organisation allowed: introspection answers inactive, a newer ID-JAG allows again', async () => {
    const first = await oauth.processGenericTokenEndpointResponse(
      as,
      { client_id: agent.id },
      await grant(await idJag()),
    );
    const sid = decodeJwt(first.access_token).sid as string;
    // ID-JAGs minted now, before the revocation, and kept for later: one dated now, one by an IdP clock 30 s ahead.
    const older = await idJag({ iat: Math.floor(Date.now() / 1000) - 5 });
    const ahead = await idJag({ iat: Math.floor(Date.now() / 1000) + 30 });
    const listed = await alice.get('/api/consent/enterprise-authorizations');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json<{ data: unknown[] }>().data).toContainEqual(
      expect.objectContaining({
        id: sid,
        agent_id: agent.id,
        agent_display_name: 'Desktop MCP client',
        issuer: idp.issuer,
        resource_uri: mcpUrl,
        resource_display_name: 'Example MCP',
        scopes: [MCP_SCOPE],
      }),
    );
    const revoked = await alice.delete(`/api/consent/enterprise-authorizations/${sid}`);
    const revokedBy = Date.now();
    expect(revoked.status, revoked.text).toBe(204);
    expect(await introspect(first.access_token)).toEqual({ active: false });
    expect(
      (await alice.get('/api/consent/enterprise-authorizations'))
        .json<{ data: { id: string }[] }>()
        .data.map((a) => a.id),
    ).not.toContain(sid);
    // An ID-JAG the IdP issued before the revocation buys nothing, even dated after it by a clock ahead within the
    // verifier's 60 s leeway; one dated beyond the revocation plus the leeway starts a new authorization.
    for (const before of [older, ahead]) {
      const stale = await refusal(await grant(before));
      expect(stale).toMatchObject({ status: 400, error: 'invalid_grant' });
      expect(stale.description).toMatch(/before this access was revoked/);
    }
    const newerIat = Math.floor(revokedBy / 1000) + 61;
    // Not ahead of the broker's clock by more than the leeway: wait for the second after the revocation.
    await new Promise((resolve) => setTimeout(resolve, (newerIat - 60) * 1000 - Date.now() + 50));
    const newer = await idJag({ iat: newerIat });
    const again = await oauth.processGenericTokenEndpointResponse(as, { client_id: agent.id }, await grant(newer));
    const newSid = decodeJwt(again.access_token).sid as string;
    expect(newSid).not.toBe(sid);
    expect(await introspect(again.access_token)).toMatchObject({ active: true, sub: ALICE });
    // An admin revokes the new one.
    const byAdmin = await admin.delete(`/api/agents/${agent.id}/enterprise-authorizations/${newSid}`);
    expect(byAdmin.status, byAdmin.text).toBe(204);
    expect(await introspect(again.access_token)).toEqual({ active: false });
    const events = await eventually(
      async () =>
        (await alice.get('/api/activity?type=enterprise_access.revoked')).json<{
          data: { actor: { type: string }; details: { authorization_id: string } }[];
        }>().data,
      (data) => data.length >= 2,
    );
    expect(events.map((event) => [event.actor.type, event.details.authorization_id])).toEqual(
      expect.arrayContaining([
        ['principal', sid],
        ['admin', newSid],
      ]),
    );
  });

  // docs/admin-api.md "Suspending an agent": its client is refused before the ID-JAG is spent, and works again once resumed.
  it('refuses a suspended agent (401 invalid_client) and issues again once it is resumed', async () => {
    // Another agent: the one above had its organisation's access revoked, which refuses ID-JAGs issued before.
    const assertion = await idJag({ clientId: other.id });
    expect((await admin.put(`/api/agents/${other.id}/suspension`, {})).status).toBe(200);
    expect(await refusal(await grant(assertion, { client: other }))).toEqual({
      status: 401,
      error: 'invalid_client',
      description: 'the agent is suspended',
    });
    expect((await admin.delete(`/api/agents/${other.id}/suspension`)).status).toBe(204);
    const issued = await oauth.processGenericTokenEndpointResponse(
      as,
      { client_id: other.id },
      await grant(assertion, { client: other }),
    );
    expect(decodeJwt(issued.access_token)).toMatchObject({ client_id: other.id, sub: ALICE });
  });

  it('never writes an ID-JAG, a token or a secret to the logs', () => {
    expect(broker.logs.lines.length).toBeGreaterThan(0);
    expect(broker.logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    expect(broker.logs.leaked([agent.secret, other.secret, IDP_SECRET])).toEqual([]);
    expect(broker.logs.text).toContain('enterprise_access_decision');
  });
});
