import {
  ApiClient,
  freePort,
  http,
  startEnterpriseIdp,
  startJwtIssuer,
  startTestBroker,
  type EnterpriseIdpClient,
  type TestBroker,
  type TestEnterpriseIdp,
  type TestJwtIssuer,
} from '@broker/testing';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCreated } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const MCP = 'https://mcp.example.com/mcp';
const MAIL_API = 'https://mail.example.com/api';
const ACTOR_AUDIENCE = 'https://ops.example.com';
const CLIENT_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const insecure = { [oauth.allowInsecureRequests]: true };

/** An unsigned JWT, as an impersonation rule with `verification: none` takes for the subject. */
function unsigned(claims: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: now, exp: now + 300, ...claims })}.`;
}

/** A confidential agent registered on the admin server: its id and broker-issued secret. */
interface Agent {
  readonly id: string;
  readonly secret: string;
}

/**
 * RFC 9068 §2.2: `aud` is REQUIRED in an `at+jwt` access token, and §3: without a `resource`
 * the authorization server uses a default resource indicator. Every grant that issues an
 * access token of the broker's (authorization_code, refresh_token, client_credentials, the
 * ID-JAG JWT bearer grant, impersonation) is asked here for one, with a resource where the
 * grant takes one and without: each token carries `aud`, the resource when one was asked
 * (unchanged), else the default audience, the issuer (docs/oauth2.md "Default audience").
 * The third-party token exchange is not among them: it returns the provider's token as stored.
 */
describe('every access token the broker issues carries aud (RFC 9068)', () => {
  let broker: TestBroker;
  let base: string;
  let gateway: TestJwtIssuer;
  let idp: TestEnterpriseIdp;
  let as: oauth.AuthorizationServer;
  let agent: Agent;
  let keys: ReturnType<typeof createRemoteJWKSet>;
  const idpClients: Record<string, EnterpriseIdpClient> = {};

  beforeAll(async () => {
    gateway = await startJwtIssuer('ES256');
    idp = await startEnterpriseIdp(idpClients);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
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
          enterprise: { trusted_issuers: [{ issuer_uri: idp.issuer, jwks_uri: idp.jwksUri }] },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const created = (path: string, body: Record<string, unknown>): Promise<string> => adminCreated(admin, path, body);
    const mcp = await created('/api/resources', {
      display_name: 'Tracker MCP',
      resource_uri: MCP,
      scopes: [{ scope: 'tools.read', description: 'Read your tickets' }],
    });
    const mail = await created('/api/services', {
      display_name: 'Mail',
      client_id: 'm',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/a',
      token_endpoint: 'https://idp.example.com/t',
      protected_resources: [MAIL_API],
    });
    const setMcp = await created('/api/permission-sets', {
      name: 'Tracker',
      resource_scopes: [{ resource_id: mcp, scopes: ['tools.read'] }],
    });
    const setMail = await created('/api/permission-sets', {
      name: 'Mail',
      service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
    });
    const id = await created('/api/agents', {
      display_name: 'Agent',
      redirect_uris: [REDIRECT],
      allowed_scopes: ['mail.read', 'tools.read', 'offline_access'],
      permission_sets: [{ permission_set_id: setMcp }, { permission_set_id: setMail }],
    });
    const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    agent = { id, secret };
    idpClients['idp-client'] = { secret: 'idp-secret', brokerClientId: id };
    const grant = await new ApiClient(base, ALICE).post(`/api/consent/agents/${id}/grants`, {
      granted_permission_sets: { [setMcp]: [mcp], [setMail]: [mail] },
    });
    expect(grant.status, grant.text).toBe(201);
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    keys = createRemoteJWKSet(new URL(as.jwks_uri as string));
  });

  afterAll(async () => {
    await broker?.stop();
    await Promise.all([gateway?.stop(), idp?.stop()]);
  });

  /** The token verified as a resource server would (RFC 9068 §4): our key, our issuer, `at+jwt`; its `aud`. */
  async function audienceOf(token: string): Promise<unknown> {
    const { payload } = await jwtVerify(token, keys, { issuer: base, typ: 'at+jwt' });
    expect(payload.aud).toBeDefined();
    return payload.aud;
  }

  const client = (): oauth.Client => ({ client_id: agent.id });
  const auth = (): oauth.ClientAuth => oauth.ClientSecretBasic(agent.secret);

  /** Alice's authorization code flow with PKCE, optionally for `resource`. */
  async function codeFlow(scope: string, resource?: string): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    const params: Record<string, string> = {
      client_id: agent.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(resource === undefined ? {} : { resource }),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const redirect = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(redirect.status, redirect.text).toBe(302);
    const callback = oauth.validateAuthResponse(as, client(), new URL(redirect.headers.location as string), state);
    return oauth.processAuthorizationCodeResponse(
      as,
      client(),
      await oauth.authorizationCodeGrantRequest(as, client(), auth(), callback, REDIRECT, verifier, insecure),
    );
  }

  async function refresh(token: string): Promise<oauth.TokenEndpointResponse> {
    return oauth.processRefreshTokenResponse(
      as,
      client(),
      await oauth.refreshTokenGrantRequest(as, client(), auth(), token, insecure),
    );
  }

  async function clientCredentials(params: Record<string, string>): Promise<oauth.TokenEndpointResponse> {
    return oauth.processClientCredentialsResponse(
      as,
      client(),
      await oauth.clientCredentialsGrantRequest(as, client(), auth(), new URLSearchParams(params), insecure),
    );
  }

  it('authorization_code and refresh_token without resource: the default audience, the issuer', async () => {
    const first = await codeFlow('mail.read offline_access');
    expect(await audienceOf(first.access_token)).toBe(base);
    const next = await refresh(first.refresh_token as string);
    expect(await audienceOf(next.access_token)).toBe(base);
    // Introspection (RFC 7662 §2.2) reports it as the token says.
    const introspection = await oauth.processIntrospectionResponse(
      as,
      client(),
      await oauth.introspectionRequest(as, client(), auth(), next.access_token, insecure),
    );
    expect(introspection).toMatchObject({ active: true, aud: base });
  });

  it('authorization_code and refresh_token for a resource: that resource, as before', async () => {
    const first = await codeFlow('tools.read offline_access', MCP);
    expect(await audienceOf(first.access_token)).toBe(MCP);
    expect(await audienceOf((await refresh(first.refresh_token as string)).access_token)).toBe(MCP);
  });

  it('client_credentials: the default audience without resource, the resource with one', async () => {
    expect(await audienceOf((await clientCredentials({ scope: 'mail.read' })).access_token)).toBe(base);
    expect(await audienceOf((await clientCredentials({ scope: 'tools.read', resource: MCP })).access_token)).toBe(MCP);
  });

  it("the ID-JAG JWT bearer grant: the identity assertion's resource", async () => {
    const assertion = await idp.signIdJag({
      sub: ALICE,
      audience: base,
      clientId: agent.id,
      resource: MCP,
      scope: 'tools.read',
    });
    const response = await oauth.genericTokenEndpointRequest(as, client(), auth(), JWT_BEARER, { assertion }, insecure);
    expect(response.status).toBe(200);
    expect(await audienceOf(((await response.json()) as { access_token: string }).access_token)).toBe(MCP);
  });

  it('impersonation: the default audience, never the routing audience', async () => {
    const audience = `${base}/impersonation/${agent.id}`;
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      audience,
      client_assertion_type: CLIENT_ASSERTION,
      client_assertion: await gateway.sign({ sub: 'gateway' }, { audience: base }),
      actor_token_type: JWT_TYPE,
      actor_token: await gateway.sign({ sub: 'ops-1' }, { audience: ACTOR_AUDIENCE }),
      subject_token_type: JWT_TYPE,
      subject_token: unsigned({ sub: ALICE }),
      scope: 'mail.read',
    });
    const issued = await http(`${base}/oauth2/token`, { method: 'POST', headers: FORM, body: form.toString() });
    expect(issued.status, issued.text).toBe(200);
    const aud = await audienceOf(issued.json<{ access_token: string }>().access_token);
    expect(aud).toBe(base);
    expect(aud).not.toBe(audience);
  });
});

/**
 * `oauth2_authorization_server.local.default_audience` names the default audience; a
 * `token_claims_expression` that yields an `aud` still sets it for a token without resource
 * (as before), and a resource still replaces both.
 */
describe('a configured default audience, and the claims expression before it', () => {
  const DEFAULT = 'https://api.example.com';
  const EXPRESSION = 'https://expression.example.com';
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let agent: Agent;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: {
          local: {
            default_audience: DEFAULT,
            token_claims_expression: `"expression" in request.scope ? {"aud": "${EXPRESSION}"} : {"tenant": "t"}`,
          },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const id = (await admin.post('/api/agents', { display_name: 'Agent' })).json<{ id: string }>().id;
    const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    agent = { id, secret };
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker?.stop();
  });

  async function audienceOf(params: Record<string, string>): Promise<unknown> {
    const client: oauth.Client = { client_id: agent.id };
    const { access_token } = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(agent.secret),
        new URLSearchParams(params),
        insecure,
      ),
    );
    const { payload } = await jwtVerify(access_token, createRemoteJWKSet(new URL(as.jwks_uri as string)), {
      issuer: base,
      typ: 'at+jwt',
    });
    return payload.aud;
  }

  it('uses the configured default audience when neither a resource nor the expression names one', async () => {
    expect(await audienceOf({ scope: 'profile' })).toBe(DEFAULT);
  });

  it("keeps the expression's aud without a resource, and the resource over both", async () => {
    expect(await audienceOf({ scope: 'expression' })).toBe(EXPRESSION);
    expect(await audienceOf({ scope: 'expression', resource: 'https://mcp.example.com/mcp' })).toBe(
      'https://mcp.example.com/mcp',
    );
  });
});
