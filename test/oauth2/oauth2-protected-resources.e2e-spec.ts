import { ApiClient, freePort, http, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCreated } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const CONSENT_UI = 'https://consent.example.com';
const MCP_A = 'https://mcp-a.example.com/mcp';
const MCP_B = 'https://mcp-b.example.com/mcp';
const MAIL_API = 'https://mail.example.com/api';
/** Registered, but in none of the agent's permission sets. */
const MCP_OTHER = 'https://mcp-other.example.com/mcp';
const insecure = { [oauth.allowInsecureRequests]: true };

interface Registry {
  agent: string;
  secret: string;
  resourceA: string;
  resourceB: string;
  mail: string;
  /** Permission sets: A's tools.read, B's b.read, A's tools.write, the mail service. */
  setA: string;
  setB: string;
  setAWrite: string;
  setMail: string;
}

/**
 * Consent per protected resource (docs/admin-api.md "Protected resources (MCP servers)"), driven by oauth4webapi against
 * a local broker: two registered MCP servers, a third-party service naming a protected resource
 * of its own (the older way), one agent whose permission sets cover all of them.
 */
describe.each(testBackends())('protected resources: consent per resource, tokens per resource on $name', (backend) => {
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let admin: ApiClient;
  let alice: ApiClient;
  let reg: Registry;
  let client: oauth.Client;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
        storage: await backend.storage(),
      },
    });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
    const created = (path: string, body: Record<string, unknown>): Promise<string> => adminCreated(admin, path, body);
    const resourceA = await created('/api/resources', {
      display_name: 'Tracker MCP',
      resource_uri: MCP_A,
      scopes: [
        { scope: 'tools.read', description: 'Read your tickets' },
        { scope: 'tools.write', description: 'Change your tickets' },
        { scope: 'tools.admin', description: 'Administer the tracker' },
      ],
    });
    const resourceB = await created('/api/resources', {
      display_name: 'Wiki MCP',
      resource_uri: MCP_B,
      scopes: [{ scope: 'b.read', description: 'Read wiki pages' }],
    });
    await created('/api/resources', {
      display_name: 'Other MCP',
      resource_uri: MCP_OTHER,
      scopes: [{ scope: 'tools.read', description: 'Read' }],
    });
    const mail = await created('/api/services', {
      display_name: 'Mail',
      client_id: 'm',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: [MAIL_API],
    });
    const setA = await created('/api/permission-sets', {
      name: 'Tracker',
      resource_scopes: [{ resource_id: resourceA, scopes: ['tools.read'] }],
    });
    const setB = await created('/api/permission-sets', {
      name: 'Wiki',
      resource_scopes: [{ resource_id: resourceB, scopes: ['b.read'] }],
    });
    const setAWrite = await created('/api/permission-sets', {
      name: 'Tracker edits',
      resource_scopes: [{ resource_id: resourceA, scopes: ['tools.write'] }],
    });
    const setMail = await created('/api/permission-sets', {
      name: 'Mail',
      service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
    });
    const agent = await created('/api/agents', {
      display_name: 'MCP client',
      redirect_uris: [REDIRECT],
      allowed_scopes: ['tools.read', 'tools.write', 'tools.admin', 'b.read', 'mail.read', 'offline_access'],
      permission_sets: [setA, setB, setAWrite, setMail].map((id) => ({
        permission_set_id: id,
        requirement_type: 'optional',
      })),
    });
    const secret = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    reg = { agent, secret, resourceA, resourceB, mail, setA, setB, setAWrite, setMail };
    client = { client_id: agent };
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker?.stop();
  });

  /** Alice's authorization request: the redirect's location, the verifier and state. */
  async function authorize(
    resources: readonly string[],
    scope: string | undefined,
  ): Promise<{ location: URL; verifier: string; state: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    const params: Record<string, string> = {
      client_id: reg.agent,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    if (scope !== undefined) params.scope = scope;
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    for (const resource of resources) url.searchParams.append('resource', resource);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(response.status, response.text).toBe(302);
    return { location: new URL(response.headers.location as string), verifier, state };
  }

  /** The consent page's session token, failing when the request was not sent to the consent page. */
  function sessionTokenOf(location: URL): string {
    expect(`${location.origin}${location.pathname}`).toBe(`${CONSENT_UI}/agents/${reg.agent}`);
    return location.searchParams.get('session_token') as string;
  }

  async function grant(sets: Record<string, string[]>, sessionToken?: string): Promise<void> {
    const query = sessionToken === undefined ? '' : `?session_token=${encodeURIComponent(sessionToken)}`;
    const response = await alice.post(`/api/consent/agents/${reg.agent}/grants${query}`, {
      granted_permission_sets: sets,
    });
    expect(response.status, response.text).toBeLessThan(300);
  }

  async function redeem(location: URL, verifier: string, state: string): Promise<oauth.TokenEndpointResponse> {
    const params = oauth.validateAuthResponse(as, client, location, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(reg.secret),
      params,
      REDIRECT,
      verifier,
      insecure,
    );
    return oauth.processAuthorizationCodeResponse(as, client, response);
  }

  const verify = async (token: string, audience: string) =>
    (await jwtVerify(token, createRemoteJWKSet(new URL(as.jwks_uri as string)), { issuer: base, audience })).payload;

  function errorOf(location: URL, state: string): string | null {
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('code')).toBeNull();
    return location.searchParams.get('error');
  }

  it('first consent: an MCP server the person never allowed goes to the consent page, which names it; once allowed, its token has aud = its URI and only its scopes', async () => {
    const first = await authorize([MCP_A], 'tools.read');
    const sessionToken = sessionTokenOf(first.location);
    const detail = (
      await alice.get(`/api/consent/agents/${reg.agent}?session_token=${encodeURIComponent(sessionToken)}`)
    ).json<{
      data: {
        resources: {
          id: string;
          resource_uri: string;
          display_name: string;
          granted: boolean;
          requested: boolean;
          permissions: { scope: string; description: string }[];
        }[];
      };
    }>().data;
    expect(detail.resources.map((r) => [r.display_name, r.resource_uri, r.granted, r.requested])).toEqual([
      ['Tracker MCP', MCP_A, false, true],
      ['Wiki MCP', MCP_B, false, false],
    ]);
    expect(detail.resources[0]?.permissions).toEqual([
      { scope: 'tools.read', description: 'Read your tickets' },
      { scope: 'tools.write', description: 'Change your tickets' },
    ]);
    await grant({ [reg.setA]: [reg.resourceA], [reg.setMail]: [reg.mail] }, sessionToken);

    const again = await authorize([MCP_A], 'tools.read');
    const token = await redeem(again.location, again.verifier, again.state);
    const payload = await verify(token.access_token, MCP_A);
    expect(payload.aud).toBe(MCP_A);
    expect(payload.scope).toBe('tools.read');
  });

  it('no scope asked: the token carries the scopes the person granted for that resource', async () => {
    const { location, verifier, state } = await authorize([MCP_A], undefined);
    expect((await verify((await redeem(location, verifier, state)).access_token, MCP_A)).scope).toBe('tools.read');
  });

  it('incremental consent: a second MCP server shows consent for it alone, keeps the first, and only then yields a code', async () => {
    const asked = await authorize([MCP_B], 'b.read');
    const sessionToken = sessionTokenOf(asked.location);
    const detail = (
      await alice.get(`/api/consent/agents/${reg.agent}?session_token=${encodeURIComponent(sessionToken)}`)
    ).json<{ data: { resources: { resource_uri: string; granted: boolean; requested: boolean }[] } }>().data;
    expect(detail.resources.map((r) => [r.resource_uri, r.granted, r.requested])).toEqual([
      [MCP_A, true, false],
      [MCP_B, false, true],
    ]);
    // What the console sends: the grant as it is, plus the new MCP server.
    await grant({ [reg.setA]: [reg.resourceA], [reg.setMail]: [reg.mail], [reg.setB]: [reg.resourceB] }, sessionToken);
    const granted = (await alice.get(`/api/consent/agents/${reg.agent}/grants`)).json<{
      data: { granted_permission_sets: Record<string, string[]> }[];
    }>().data[0];
    expect(granted?.granted_permission_sets).toEqual({
      [reg.setA]: [reg.resourceA],
      [reg.setMail]: [reg.mail],
      [reg.setB]: [reg.resourceB],
    });

    const b = await authorize([MCP_B], 'b.read');
    const payload = await verify((await redeem(b.location, b.verifier, b.state)).access_token, MCP_B);
    expect(payload).toMatchObject({ aud: MCP_B, scope: 'b.read' });
    const a = await authorize([MCP_A], 'tools.read');
    expect((await verify((await redeem(a.location, a.verifier, a.state)).access_token, MCP_A)).aud).toBe(MCP_A);
  });

  it('step-up: a scope of a granted MCP server that the grant does not cover goes to the consent page again', async () => {
    const { location } = await authorize([MCP_A], 'tools.read tools.write');
    sessionTokenOf(location);
  });

  it('refuses by redirect: two registered resources at once (invalid_target), a scope the resource does not offer or no permission set bundles (invalid_scope), an unregistered resource or one no permission set of the agent covers (invalid_target)', async () => {
    const both = await authorize([MCP_A, MCP_B], 'tools.read');
    expect(errorOf(both.location, both.state)).toBe('invalid_target');
    const foreign = await authorize([MCP_A], 'b.read');
    expect(errorOf(foreign.location, foreign.state)).toBe('invalid_scope');
    const unbundled = await authorize([MCP_A], 'tools.admin');
    expect(errorOf(unbundled.location, unbundled.state)).toBe('invalid_scope');
    const unknown = await authorize(['https://unknown.example.com/mcp'], 'tools.read');
    expect(errorOf(unknown.location, unknown.state)).toBe('invalid_target');
    const uncovered = await authorize([MCP_OTHER], 'tools.read');
    expect(errorOf(uncovered.location, uncovered.state)).toBe('invalid_target');
  });

  it("a third-party service's protected resource (the older way) is covered while the grant delegates that service, refused once it does not", async () => {
    const covered = await authorize([MAIL_API], 'mail.read');
    expect(
      (await verify((await redeem(covered.location, covered.verifier, covered.state)).access_token, MAIL_API)).aud,
    ).toBe(MAIL_API);
    await grant({ [reg.setA]: [reg.resourceA], [reg.setB]: [reg.resourceB] });
    const refused = await authorize([MAIL_API], 'mail.read');
    expect(errorOf(refused.location, refused.state)).toBe('access_denied');
  });

  it('client_credentials for a registered resource: only the scopes it offers', async () => {
    const ok = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(reg.secret),
      new URLSearchParams({ resource: MCP_B, scope: 'b.read' }),
      insecure,
    );
    const payload = await verify((await oauth.processClientCredentialsResponse(as, client, ok)).access_token, MCP_B);
    expect(payload).toMatchObject({ aud: MCP_B, scope: 'b.read', sub: reg.agent });
    const refused = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(reg.secret),
      new URLSearchParams({ resource: MCP_B, scope: 'tools.read' }),
      insecure,
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'invalid_scope',
      error_description: 'a requested scope is not offered by the resource',
    });
  });

  it('a grant replaced without an MCP server ends the refresh tokens bound to it; the others keep working', async () => {
    const a = await authorize([MCP_A], 'tools.read offline_access');
    const tokenA = await redeem(a.location, a.verifier, a.state);
    const b = await authorize([MCP_B], 'b.read offline_access');
    const tokenB = await redeem(b.location, b.verifier, b.state);
    expect(tokenA.refresh_token).toBeDefined();
    expect(tokenB.refresh_token).toBeDefined();
    await grant({ [reg.setB]: [reg.resourceB] });

    const refreshA = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(reg.secret),
      tokenA.refresh_token as string,
      insecure,
    );
    expect(refreshA.status).toBe(400);
    expect(((await refreshA.json()) as { error: string }).error).toBe('invalid_grant');
    const refreshB = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(reg.secret),
      tokenB.refresh_token as string,
      insecure,
    );
    const renewed = await oauth.processRefreshTokenResponse(as, client, refreshB);
    expect((await verify(renewed.access_token, MCP_B)).scope).toBe('b.read offline_access');
    // And the MCP server taken out needs consent again.
    sessionTokenOf((await authorize([MCP_A], 'tools.read')).location);
  });
});
