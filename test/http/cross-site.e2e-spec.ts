import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  freePort,
  http,
  startGatewayFixture,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';
import { allowByOrganisation } from '../support/enterprise-authorizations';

const ALICE = 'alice@example.com';
const ADMIN = 'admin@example.com';
const EVIL = 'https://evil.example';
const CONSENT_UI = 'https://consent.example.com';
const CONSOLE = 'https://console.example.com';
const ADMIN_CONSOLE = 'https://admin-console.example.com';
const REDIRECT = 'https://agent.example.com/cb';

type Headers = Record<string, string>;

interface Route {
  readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path as the OpenAPI document writes it (`{param}`). */
  readonly template: string;
  readonly path: string;
  readonly body?: unknown;
  /** Gateway routes authenticate by client assertion and bearer subject token. */
  readonly gateway?: boolean;
}

function refusedAsForeign(response: HttpResponse, origin = EVIL): void {
  expect(response.status, response.text).toBe(403);
  expect(response.json()).toEqual({
    error: 'forbidden',
    message: `cross-site request refused: origin ${origin} is not allowed`,
  });
}

describe('cross-site requests (CSRF)', () => {
  let gateway: GatewayFixture;
  let broker: TestBroker;
  let user: string;
  let admin: string;
  let adminApi: ApiClient;
  let alice: ApiClient;
  let reg: RegistryFixture;
  let secret: string;
  let approval: string;
  let keyKid: string;
  let webhookId: string;
  /** Alice's live enterprise authorization of the agent (what the JWT bearer grant records). */
  let enterpriseId: string;
  let resourceId: string;
  /** Alice's grant, as the admin API lists it. */
  let grantId: string;
  let cookie: string;
  let adminRoutes: Route[];
  let registryBefore: string[];
  let userRoutes: Route[];

  const send = (base: string, route: Route, headers: Headers): Promise<HttpResponse> =>
    http(`${base}${route.path}`, {
      method: route.method,
      headers: route.body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: route.body === undefined ? undefined : JSON.stringify(route.body),
    });

  async function gatewayHeaders(): Promise<Headers> {
    return {
      authorization: `Bearer ${await gateway.subjectToken(ALICE, reg.agent)}`,
      'x-client-assertion': await gateway.assertion(),
    };
  }

  async function pendingApproval(): Promise<string> {
    const response = await http(`${user}/api/approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await gatewayHeaders()) },
      body: JSON.stringify({
        tool_name: 'send_email',
        arguments: { to: 'bob@example.com' },
        metadata: {},
        risk_level: 'medium',
      }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  const clientCredentialsToken = (clientSecret: string, headers: Headers = {}): Promise<HttpResponse> =>
    http(`${user}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: reg.agent,
        client_secret: clientSecret,
      }).toString(),
    });

  /** Every admin list, as text: what a refused request must leave untouched. */
  const registry = (): Promise<string[]> =>
    Promise.all(
      [
        '/api/agents',
        '/api/services',
        '/api/resources',
        '/api/permission-sets',
        '/api/oauth2-server/signing-keys',
        '/api/webhooks',
      ].map(async (path) => (await adminApi.get(path)).text),
    );

  const grants = async (): Promise<unknown[]> =>
    (await alice.get(`/api/consent/agents/${reg.agent}/grants`)).json<{ data: unknown[] }>().data;

  beforeAll(async () => {
    const adminPort = await freePort();
    admin = `http://127.0.0.1:${adminPort}`;
    // Subject tokens are addressed to the broker (`user`), the default audience.
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      config: {
        server: {
          enduser: { consent_ui_url: CONSENT_UI, cors: { allowed_origins: [CONSENT_UI, CONSOLE] } },
          admin: { port: adminPort, public_url: admin, allowed_origins: ADMIN_CONSOLE },
        },
      },
    });
    ({ broker, base: user } = gateway);
    adminApi = new ApiClient(admin, ADMIN);
    alice = new ApiClient(user, ALICE);
    reg = await createRegistry(adminApi);
    expect(
      (
        await adminApi.put(`/api/agents/${reg.agent}`, {
          display_name: 'Mail Agent',
          redirect_uris: [REDIRECT],
          allowed_scopes: ['profile'],
          permission_sets: [{ permission_set_id: reg.readMail }],
        })
      ).status,
    ).toBe(200);
    secret = (await adminApi.post(`/api/agents/${reg.agent}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    keyKid = (await adminApi.post('/api/oauth2-server/signing-keys', {})).json<{ kid: string }>().kid;
    resourceId = (
      await adminApi.post('/api/resources', {
        display_name: 'Files MCP',
        resource_uri: 'https://files-mcp.example.com/mcp',
        scopes: [{ scope: 'files.read', description: 'Read your files' }],
      })
    ).json<{ id: string }>().id;
    webhookId = (
      await adminApi.post('/api/webhooks', {
        url: 'https://hooks.example.com/broker',
        event_types: ['grant.created'],
        enabled: true,
      })
    ).json<{ id: string }>().id;
    expect(
      (
        await alice.post(`/api/consent/agents/${reg.agent}/grants`, {
          granted_permission_sets: { [reg.readMail]: [reg.mail] },
        })
      ).status,
    ).toBe(201);
    enterpriseId = await allowByOrganisation(broker, {
      principal: ALICE,
      agentId: reg.agent,
      resourceUri: 'https://files-mcp.example.com/mcp',
    });
    approval = await pendingApproval();
    grantId = (await adminApi.get(`/api/agents/${reg.agent}/grants`)).json<{ items: { id: string }[] }>().items[0]
      ?.id as string;
    const me = await alice.get('/api/me');
    registryBefore = await registry();
    cookie = ((me.headers['set-cookie'] ?? []).find((value) => value.startsWith('session_token=')) as string).split(
      ';',
    )[0] as string;

    const agentBody = { display_name: 'Renamed by evil', redirect_uris: [REDIRECT] };
    const serviceBody = {
      display_name: 'evil',
      client_id: `evil-${randomUUID()}`,
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/authorize',
      token_endpoint: 'https://idp.example.com/token',
      scopes: [],
      protected_resources: [`https://evil-${randomUUID()}.example.com/api`],
    };
    const resourceBody = {
      display_name: 'evil',
      resource_uri: `https://evil-${randomUUID()}.example.com/mcp`,
      scopes: [],
    };
    const setBody = { name: `Evil ${randomUUID()}`, service_scopes: [{ service_id: reg.calendar, scopes: [] }] };
    adminRoutes = [
      { method: 'POST', template: '/api/agents', path: '/api/agents', body: agentBody },
      { method: 'PUT', template: '/api/agents/{agentId}', path: `/api/agents/${reg.agent}`, body: agentBody },
      { method: 'DELETE', template: '/api/agents/{agentId}', path: `/api/agents/${reg.agent}` },
      { method: 'POST', template: '/api/services', path: '/api/services', body: serviceBody },
      {
        method: 'PUT',
        template: '/api/services/{serviceId}',
        path: `/api/services/${reg.calendar}`,
        body: serviceBody,
      },
      { method: 'DELETE', template: '/api/services/{serviceId}', path: `/api/services/${reg.calendar}` },
      { method: 'POST', template: '/api/resources', path: '/api/resources', body: resourceBody },
      {
        method: 'PUT',
        template: '/api/resources/{resourceId}',
        path: `/api/resources/${resourceId}`,
        body: resourceBody,
      },
      { method: 'DELETE', template: '/api/resources/{resourceId}', path: `/api/resources/${resourceId}` },
      { method: 'POST', template: '/api/permission-sets', path: '/api/permission-sets', body: setBody },
      {
        method: 'PUT',
        template: '/api/permission-sets/{permissionSetId}',
        path: `/api/permission-sets/${reg.calendarSet}`,
        body: setBody,
      },
      {
        method: 'DELETE',
        template: '/api/permission-sets/{permissionSetId}',
        path: `/api/permission-sets/${reg.calendarSet}`,
      },
      {
        method: 'POST',
        template: '/api/agents/{agentId}/client-credentials',
        path: `/api/agents/${reg.agent}/client-credentials`,
      },
      {
        method: 'DELETE',
        template: '/api/agents/{agentId}/client-credentials',
        path: `/api/agents/${reg.agent}/client-credentials`,
      },
      {
        method: 'POST',
        template: '/api/oauth2-server/signing-keys',
        path: '/api/oauth2-server/signing-keys',
        body: {},
      },
      {
        method: 'PUT',
        template: '/api/oauth2-server/signing-keys/{kid}/current',
        path: `/api/oauth2-server/signing-keys/${keyKid}/current`,
      },
      {
        method: 'DELETE',
        template: '/api/oauth2-server/signing-keys/{kid}',
        path: `/api/oauth2-server/signing-keys/${keyKid}`,
      },
      {
        method: 'POST',
        template: '/api/webhooks',
        path: '/api/webhooks',
        body: { url: 'https://evil.example.com/hook', event_types: ['grant.created'] },
      },
      {
        method: 'PUT',
        template: '/api/webhooks/{webhookId}',
        path: `/api/webhooks/${webhookId}`,
        body: { url: 'https://evil.example.com/hook', event_types: ['grant.created'], enabled: true },
      },
      { method: 'DELETE', template: '/api/webhooks/{webhookId}', path: `/api/webhooks/${webhookId}` },
      {
        method: 'DELETE',
        template: '/api/agents/{agentId}/enterprise-authorizations/{authorizationId}',
        path: `/api/agents/${reg.agent}/enterprise-authorizations/${enterpriseId}`,
      },
      { method: 'POST', template: '/api/webhooks/{webhookId}/secret', path: `/api/webhooks/${webhookId}/secret` },
      {
        method: 'PUT',
        template: '/api/agents/{agentId}/suspension',
        path: `/api/agents/${reg.agent}/suspension`,
        body: { reason: 'evil' },
      },
      {
        method: 'DELETE',
        template: '/api/agents/{agentId}/suspension',
        path: `/api/agents/${reg.agent}/suspension`,
      },
      { method: 'DELETE', template: '/api/agents/{agentId}/grants', path: `/api/agents/${reg.agent}/grants` },
      {
        method: 'DELETE',
        template: '/api/agents/{agentId}/grants/{grantId}',
        path: `/api/agents/${reg.agent}/grants/${grantId}`,
      },
    ];
    userRoutes = [
      {
        method: 'POST',
        template: '/api/consent/agents/{agentId}/grants',
        path: `/api/consent/agents/${reg.agent}/grants`,
        body: { granted_permission_sets: {} },
      },
      {
        method: 'DELETE',
        template: '/api/consent/agents/{agentId}/grants',
        path: `/api/consent/agents/${reg.agent}/grants`,
      },
      {
        method: 'POST',
        template: '/api/consent/agents/{agentId}/deny',
        path: `/api/consent/agents/${reg.agent}/deny`,
        body: {},
      },
      {
        method: 'POST',
        template: '/api/consent/agents/{agentId}/expired',
        path: `/api/consent/agents/${reg.agent}/expired`,
        body: {},
      },
      {
        method: 'DELETE',
        template: '/api/third-party/{serviceId}/session',
        path: `/api/third-party/${reg.mail}/session`,
      },
      {
        method: 'POST',
        template: '/api/third-party/{serviceId}/session/refresh',
        path: `/api/third-party/${reg.mail}/session/refresh`,
      },
      {
        method: 'POST',
        template: '/api/approvals/{id}/approve',
        path: `/api/approvals/${approval}/approve`,
        body: { persistence: 'once' },
      },
      {
        method: 'POST',
        template: '/api/approvals/{id}/scope-preview',
        path: `/api/approvals/${approval}/scope-preview`,
        body: { persistence: 'permanent' },
      },
      {
        method: 'POST',
        template: '/api/approvals/{id}/deny',
        path: `/api/approvals/${approval}/deny`,
        body: { persistence: 'permanent' },
      },
      { method: 'POST', template: '/api/approvals/{id}/revoke', path: `/api/approvals/${approval}/revoke` },
      {
        method: 'POST',
        template: '/api/approvals',
        path: '/api/approvals',
        body: { tool_name: 'wipe', arguments: {}, metadata: {}, risk_level: 'high' },
        gateway: true,
      },
      {
        method: 'POST',
        template: '/api/approvals/{id}/consume',
        path: `/api/approvals/${approval}/consume`,
        gateway: true,
      },
      // Refused before the route is reached: an id that names no request shows it as well as a real one.
      {
        method: 'POST',
        template: '/api/authorization-requests/{id}/allow',
        path: `/api/authorization-requests/${randomUUID()}/allow`,
        body: {},
      },
      {
        method: 'POST',
        template: '/api/authorization-requests/{id}/deny',
        path: `/api/authorization-requests/${randomUUID()}/deny`,
      },
      {
        method: 'DELETE',
        template: '/api/consent/enterprise-authorizations/{authorizationId}',
        path: `/api/consent/enterprise-authorizations/${enterpriseId}`,
      },
    ];
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('covers every unsafe route of both OpenAPI documents except the OAuth2 endpoints', async () => {
    for (const [base, routes] of [
      [admin, adminRoutes],
      [user, userRoutes],
    ] as const) {
      const document = (await http(`${base}/openapi.json`)).json<{ paths: Record<string, Record<string, unknown>> }>();
      const unsafe = Object.entries(document.paths)
        .filter(([path]) => !path.startsWith('/oauth2/'))
        .flatMap(([path, operations]) =>
          Object.keys(operations)
            .filter((method) => ['post', 'put', 'patch', 'delete'].includes(method))
            .map((method) => `${method.toUpperCase()} ${path}`),
        );
      expect(unsafe.sort()).toEqual(routes.map((route) => `${route.method} ${route.template}`).sort());
    }
  });

  it('refuses every state-changing admin route from a foreign origin, though the principal header is there', async () => {
    for (const route of adminRoutes)
      refusedAsForeign(await send(admin, route, { 'x-remote-user': ADMIN, origin: EVIL }));
  });

  it('refuses every state-changing end-user route from a foreign origin, with the principal header, with the cookie, or as a gateway', async () => {
    for (const route of userRoutes) {
      const credentials = route.gateway ? await gatewayHeaders() : { 'x-remote-user': ALICE };
      refusedAsForeign(await send(user, route, { ...credentials, origin: EVIL }));
      if (!route.gateway) refusedAsForeign(await send(user, route, { cookie, origin: EVIL }));
    }
  });

  it('counts Origin: null and, without an Origin, Sec-Fetch-Site: cross-site as foreign', async () => {
    const deleteGrant = userRoutes[1] as Route;
    refusedAsForeign(await send(user, deleteGrant, { 'x-remote-user': ALICE, origin: 'null' }), 'null');
    refusedAsForeign(await send(admin, adminRoutes[2] as Route, { 'x-remote-user': ADMIN, origin: 'null' }), 'null');
    for (const credentials of [{ 'x-remote-user': ALICE }, { cookie }] as Headers[]) {
      const response = await send(user, deleteGrant, { ...credentials, 'sec-fetch-site': 'cross-site' });
      expect(response.status).toBe(403);
      expect(response.json()).toEqual({
        error: 'forbidden',
        message: 'cross-site request refused: Sec-Fetch-Site is cross-site and no allowed Origin was sent',
      });
    }
    expect(
      (await send(admin, adminRoutes[2] as Route, { 'x-remote-user': ADMIN, 'sec-fetch-site': 'cross-site' })).status,
    ).toBe(403);
  });

  it('leaves everything as it was after the refused requests', async () => {
    // Grant still there; agents, services, permission sets and signing keys exactly as they were.
    expect(await grants()).toHaveLength(1);
    expect(await registry()).toEqual(registryBefore);
    expect((await adminApi.get(`/api/agents/${reg.agent}`)).json<{ display_name: string }>().display_name).toBe(
      'Mail Agent',
    );
    // The secret was neither rotated nor revoked: it still works, even from a foreign page (the token endpoint is cross-origin by design).
    expect((await clientCredentialsToken(secret, { origin: EVIL, 'sec-fetch-site': 'cross-site' })).status).toBe(200);
    // The extra signing key is neither current nor deleted.
    const keys = (await adminApi.get('/api/oauth2-server/signing-keys')).json<{
      items: { kid: string; is_current: boolean; deleted_at: string | null }[];
    }>().items;
    expect(keys.find((key) => key.kid === keyKid)).toMatchObject({ is_current: false, deleted_at: null });
    // What Alice's organisation allowed the agent is still live.
    expect(
      (await alice.get('/api/consent/enterprise-authorizations'))
        .json<{ data: { id: string }[] }>()
        .data.map((authorization) => authorization.id),
    ).toEqual([enterpriseId]);
    // The approval is still pending and unconsumed.
    expect(
      (await alice.get(`/api/approvals/${approval}`)).json<{ data: Record<string, unknown> }>().data,
    ).toMatchObject({ status: 'pending', consumed: false });
  });

  it("lets the server's own origin and the configured origins change state, by header or cookie", async () => {
    const post = (origin: string, credentials: Headers): Promise<HttpResponse> =>
      send(
        user,
        { ...(userRoutes[0] as Route), body: { granted_permission_sets: { [reg.readMail]: [reg.mail] } } },
        { ...credentials, origin },
      );
    for (const origin of [user, CONSENT_UI, CONSOLE]) {
      expect((await post(origin, { 'x-remote-user': ALICE })).status).toBe(201);
      expect((await post(origin, { cookie })).status).toBe(201);
    }
    // An allowed Origin wins over Sec-Fetch-Site (a consent UI on another site is cross-site).
    expect((await post(CONSENT_UI, { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(201);
    for (const origin of [admin, ADMIN_CONSOLE]) {
      const created = await httpJsonAs(
        admin,
        '/api/agents',
        { display_name: `From ${origin}` },
        { 'x-remote-user': ADMIN, origin },
      );
      expect(created.status, created.text).toBe(201);
    }
    // The end-user origins mean nothing to the admin server, and the reverse.
    refusedAsForeign(
      await httpJsonAs(admin, '/api/agents', { display_name: 'x' }, { 'x-remote-user': ADMIN, origin: CONSENT_UI }),
      CONSENT_UI,
    );
    refusedAsForeign(await post(ADMIN_CONSOLE, { 'x-remote-user': ALICE }), ADMIN_CONSOLE);
  });

  it('leaves requests without an Origin alone (gateways, curl, scripts), also with a same-site or same-origin Sec-Fetch-Site', async () => {
    for (const site of [undefined, 'same-origin', 'same-site', 'none']) {
      const headers: Headers =
        site === undefined ? { 'x-remote-user': ADMIN } : { 'x-remote-user': ADMIN, 'sec-fetch-site': site };
      expect(
        (await httpJsonAs(admin, '/api/agents', { display_name: `Script ${site ?? 'plain'}` }, headers)).status,
      ).toBe(201);
    }
    expect(
      (
        await http(`${user}/api/approvals`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(await gatewayHeaders()) },
          body: JSON.stringify({ tool_name: 'read', arguments: {}, metadata: {}, risk_level: 'low' }),
        })
      ).status,
    ).toBe(201);
    expect((await alice.delete(`/api/consent/agents/${reg.agent}/grants`)).status).toBe(204);
    expect(await grants()).toEqual([]);
  });

  it('still refuses a mutating request authenticated only by the cookie when it carries no Origin', async () => {
    const response = await send(user, userRoutes[1] as Route, { cookie });
    expect(response.status).toBe(403);
    expect(response.json<{ error: string }>().error).toBe('forbidden');
  });

  it("keeps the refused requests' credentials out of the log", () => {
    expect(broker.logs.leaked([secret, cookie.slice('session_token='.length)])).toEqual([]);
  });
});

function httpJsonAs(base: string, path: string, body: unknown, headers: Headers): Promise<HttpResponse> {
  return http(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
