import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ServerKind } from '@broker/config';
import {
  ApiClient,
  completeAuthorization,
  coveredOperations,
  http,
  startGatewayFixture,
  startThirdPartyProvider,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type ThirdPartyProvider,
} from '@broker/testing';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowByOrganisation } from '../support/enterprise-authorizations';
import { BOTH_SERVERS } from '../support/servers';

/**
 * Every operation of both OpenAPI documents is called at least once with a valid
 * request, so none is left unchecked. Every answer below goes through `http()`, `ApiClient`
 * or `fetch` (oauth4webapi, jose's remote key set), each checked against the documents
 * (`libs/testing/src/openapi-contract.ts`); the last test compares the operations of the
 * documents with the operations whose answers were checked.
 */

const ALICE = 'alice@example.com';
const CONSENT_UI = 'https://consent.example.com';
const REDIRECT = 'https://agent.example.com/cb';
const RESOURCE = 'https://mail.example.com/api';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const insecure = { [oauth.allowInsecureRequests]: true };

const DOCUMENTS: Readonly<Record<ServerKind, string>> = {
  enduser: 'openapi/user-api.json',
  admin: 'openapi/admin-api.json',
};
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `<server kind> <operationId>` of every operation both documents describe, read from the generated files. */
function documentedOperations(): string[] {
  const operations: string[] = [];
  for (const [kind, file] of Object.entries(DOCUMENTS)) {
    const document = JSON.parse(readFileSync(resolve(file), 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation === undefined) continue;
        // An operation without an id could never be recorded as covered: name it so the test fails on it.
        operations.push(`${kind} ${operation.operationId ?? `(no operationId: ${method.toUpperCase()} ${path})`}`);
      }
    }
  }
  return operations;
}

interface Created {
  id: string;
}

describe.each(testBackends())(
  'one story calling every documented operation with a valid request, on $name',
  (backend) => {
    let gateway: GatewayFixture;
    let provider: ThirdPartyProvider | undefined;
    let base: string;
    let admin: ApiClient;
    let alice: ApiClient;
    let as: oauth.AuthorizationServer;
    let serviceId: string;
    let setId: string;
    let agentId: string;
    let clientSecret: string;
    let accessToken: string;
    let ownToken: string;

    beforeAll(async () => {
      gateway = await startGatewayFixture({
        servers: BOTH_SERVERS,
        backend,
        config: {
          server: { enduser: { consent_ui_url: CONSENT_UI } },
          // The test provider listens on loopback, which issuer discovery refuses unless allowed.
          third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
          // The backchannel authentication endpoint (docs/ciba.md) exists only when enabled.
          oauth2_authorization_server: { ciba: { enabled: true } },
        },
      });
      base = gateway.base;
      admin = new ApiClient(gateway.broker.url('admin'));
      alice = new ApiClient(base, ALICE);
    });

    afterAll(async () => {
      await gateway?.stop();
      await provider?.stop();
    });

    const tokenRequest = (fields: Record<string, string>): Promise<HttpResponse> =>
      http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });

    const createApproval = async (tool: string, args: Record<string, unknown>): Promise<HttpResponse> =>
      http(`${base}/api/approvals`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await gateway.subjectToken(ALICE, agentId)}`,
          'x-client-assertion': await gateway.assertion(),
        },
        body: JSON.stringify({ metadata: {}, tool_name: tool, arguments: args, risk_level: 'low' }),
      });

    const newApproval = async (tool: string, args: Record<string, unknown>): Promise<string> => {
      const response = await createApproval(tool, args);
      expect(response.status, response.text).toBe(201);
      return response.json<{ data: Created }>().data.id;
    };

    it('both servers answer their health check', async () => {
      for (const url of [base, gateway.broker.url('admin')]) {
        const response = await http(`${url}/health`);
        expect(response.status, response.text).toBe(200);
      }
    });

    it('Prometheus scrapes the admin server from a trusted source, without a principal', async () => {
      const response = await http(`${gateway.broker.url('admin')}/metrics`);
      expect(response.status, response.text).toBe(200);
      expect(response.text).toContain('# TYPE broker_http_request_duration_seconds histogram');
    });

    it('the admin console asks who is signed in and with which role', async () => {
      const me = await admin.get('/api/me');
      expect(me.status, me.text).toBe(200);
      expect(me.json()).toEqual({ principal: 'admin@example.com', role: 'admin' });
    });

    it('the admin reads the overview', async () => {
      const overview = await admin.get('/api/overview');
      expect(overview.status, overview.text).toBe(200);
      expect(overview.json()).toMatchObject({ mode: 'local', status: 'healthy' });
    });

    it('the admin registers a service, then points it at the provider (discovered from its issuer), reads and lists it', async () => {
      // The provider's redirect URI contains the service id: the service is registered first, the provider learns it after.
      const placeholder = 'https://placeholder.example.com';
      const created = await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'pending',
        client_secret: 'pending',
        issuer_uri: placeholder,
        authorization_endpoint: `${placeholder}/a`,
        token_endpoint: `${placeholder}/t`,
        scopes: [{ scope: 'mail.read', description: 'Read mail' }],
        protected_resources: [RESOURCE],
      });
      expect(created.status, created.text).toBe(201);
      serviceId = created.json<Created>().id;
      provider = await startThirdPartyProvider({
        redirectUris: [`${base}/api/third-party/${serviceId}/oauth2/callback`],
        scopes: ['mail.read'],
      });

      const replaced = await admin.put(`/api/services/${serviceId}`, {
        display_name: 'Mail',
        description: 'The mail service',
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
        issuer_uri: provider.issuer,
        scopes: [{ scope: 'mail.read', description: 'Read mail' }],
        protected_resources: [RESOURCE],
      });
      expect(replaced.status, replaced.text).toBe(200);
      expect(replaced.json()).toMatchObject({
        id: serviceId,
        client_secret: 'REDACTED',
        token_endpoint: `${provider.issuer}/token`,
      });

      const read = await admin.get(`/api/services/${serviceId}`);
      expect(read.status, read.text).toBe(200);
      const list = await admin.get('/api/services');
      expect(list.status, list.text).toBe(200);
      expect(list.json<Created[]>().map((service) => service.id)).toEqual([serviceId]);
    });

    it('the admin creates, replaces, reads and lists a permission set', async () => {
      const created = await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
      });
      expect(created.status, created.text).toBe(201);
      setId = created.json<Created>().id;
      const replaced = await admin.put(`/api/permission-sets/${setId}`, {
        name: 'Mail',
        description: 'Read your mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'], requirement_type: 'mandatory' }],
      });
      expect(replaced.status, replaced.text).toBe(200);
      const read = await admin.get(`/api/permission-sets/${setId}`);
      expect(read.status, read.text).toBe(200);
      const list = await admin.get(`/api/permission-sets?service_id=${serviceId}`);
      expect(list.status, list.text).toBe(200);
      expect(list.json<{ items: Created[] }>().items.map((set) => set.id)).toEqual([setId]);
    });

    it('the admin registers, replaces, reads, lists and deletes a protected resource', async () => {
      const created = await admin.post('/api/resources', {
        display_name: 'Files MCP',
        resource_uri: 'https://files-mcp.example.com/mcp',
        scopes: [{ scope: 'files.read', description: 'Read your files' }],
      });
      expect(created.status, created.text).toBe(201);
      const resourceId = created.json<Created>().id;
      const replaced = await admin.put(`/api/resources/${resourceId}`, {
        display_name: 'Files MCP',
        description: 'Your files',
        logo_url: 'https://files-mcp.example.com/logo.png',
        resource_uri: 'https://files-mcp.example.com/mcp',
        scopes: [{ scope: 'files.read', description: 'Read your files' }],
      });
      expect(replaced.status, replaced.text).toBe(200);
      const read = await admin.get(`/api/resources/${resourceId}`);
      expect(read.status, read.text).toBe(200);
      const list = await admin.get('/api/resources');
      expect(list.status, list.text).toBe(200);
      expect(list.json<{ items: Created[] }>().items.map((resource) => resource.id)).toEqual([resourceId]);
      const deleted = await admin.delete(`/api/resources/${resourceId}`);
      expect(deleted.status, deleted.text).toBe(204);
    });

    it('the admin creates, replaces, reads and lists an agent', async () => {
      const body = {
        display_name: 'Mail Agent',
        redirect_uris: [REDIRECT],
        allowed_scopes: ['mail.read'],
        permission_sets: [{ permission_set_id: setId }],
      };
      const created = await admin.post('/api/agents', body);
      expect(created.status, created.text).toBe(201);
      agentId = created.json<Created>().id;
      const replaced = await admin.put(`/api/agents/${agentId}`, {
        ...body,
        description: 'Reads your mail',
        canonical_id: 'mail-agent',
      });
      expect(replaced.status, replaced.text).toBe(200);
      const read = await admin.get(`/api/agents/${agentId}`);
      expect(read.status, read.text).toBe(200);
      expect(read.json()).toMatchObject({ id: agentId, canonical_id: 'mail-agent' });
      const list = await admin.get('/api/agents');
      expect(list.status, list.text).toBe(200);
      expect(list.json<Created[]>().map((agent) => agent.id)).toEqual([agentId]);
    });

    it('the admin suspends the agent, reads the suspension and resumes it', async () => {
      const suspended = await admin.put(`/api/agents/${agentId}/suspension`, { reason: 'Reviewing its access' });
      expect(suspended.status, suspended.text).toBe(200);
      const read = await admin.get(`/api/agents/${agentId}/suspension`);
      expect(read.status, read.text).toBe(200);
      expect(read.json()).toMatchObject({ reason: 'Reviewing its access' });
      const resumed = await admin.delete(`/api/agents/${agentId}/suspension`);
      expect(resumed.status, resumed.text).toBe(204);
    });

    it('the admin issues client credentials (201), rotates them (200) and reads their metadata', async () => {
      const first = await admin.post(`/api/agents/${agentId}/client-credentials`);
      expect(first.status, first.text).toBe(201);
      const rotated = await admin.post(`/api/agents/${agentId}/client-credentials`);
      expect(rotated.status, rotated.text).toBe(200);
      clientSecret = rotated.json<{ client_secret: string }>().client_secret;
      const read = await admin.get(`/api/agents/${agentId}/client-credentials`);
      expect(read.status, read.text).toBe(200);
      expect(read.json()).toMatchObject({ client_id: agentId });
    });

    it('the admin adds a signing key, promotes it and removes the one it replaced', async () => {
      const before = await admin.get('/api/oauth2-server/signing-keys');
      expect(before.status, before.text).toBe(200);
      const [startup] = before.json<{ items: { kid: string; is_current: boolean }[] }>().items;
      expect(startup?.is_current).toBe(true);
      const added = await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'ES256' });
      expect(added.status, added.text).toBe(201);
      const { kid } = added.json<{ kid: string }>();
      const promoted = await admin.put(`/api/oauth2-server/signing-keys/${kid}/current`);
      expect(promoted.status, promoted.text).toBe(200);
      expect(promoted.json()).toMatchObject({ kid, is_current: true });
      const removed = await admin.delete(`/api/oauth2-server/signing-keys/${startup?.kid ?? ''}`);
      expect(removed.status, removed.text).toBe(204);
    });

    it('the user reads who they are and their (empty) delegations', async () => {
      const me = await alice.get('/api/me');
      expect(me.status, me.text).toBe(200);
      expect(me.json()).toEqual({ data: { principal: ALICE, display_name: ALICE, picture_url: null } });
      const delegations = await alice.get('/api/consent/agents');
      expect(delegations.status, delegations.text).toBe(200);
      expect(delegations.json()).toEqual({ data: [] });
    });

    it('the user connects the third-party account: authorize → provider → callback', async () => {
      const start = await alice.get(
        `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${base}/done`)}`,
      );
      expect(start.status, start.text).toBe(302);
      const callback = await completeAuthorization(
        start.headers.location as string,
        `${base}/api/third-party/${serviceId}/oauth2/callback`,
      );
      const finish = await http(callback, { headers: { 'x-remote-user': ALICE } });
      expect(finish.status, finish.text).toBe(302);
      expect(finish.headers.location).toBe(`${base}/done?success=true&service_id=${serviceId}`);
    });

    it('the user reads the sessions, the session, its affected agents, and forces a refresh', async () => {
      const sessions = await alice.get('/api/third-party/sessions');
      expect(sessions.status, sessions.text).toBe(200);
      expect(sessions.json<{ data: { session: unknown }[] }>().data.map((item) => item.session)).toEqual([
        expect.objectContaining({ has_refresh_token: true }),
      ]);
      const detail = await alice.get(`/api/third-party/${serviceId}/session`);
      expect(detail.status, detail.text).toBe(200);
      const affected = await alice.get(`/api/third-party/${serviceId}/session/affected-agents`);
      expect(affected.status, affected.text).toBe(200);
      const refreshed = await alice.post(`/api/third-party/${serviceId}/session/refresh`);
      expect(refreshed.status, refreshed.text).toBe(200);
    });

    it('an OAuth client discovers the broker (RFC 8414 metadata)', async () => {
      const issuer = new URL(base);
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      expect(as.token_endpoint).toBe(`${base}/oauth2/token`);
    });

    describe('authorization code flow with PKCE through the consent page', () => {
      let verifier: string;
      let state: string;
      let authorizeUrl: string;

      const authorize = async (): Promise<URL> => {
        const response = await http(authorizeUrl, { headers: { 'x-remote-user': ALICE } });
        expect(response.status, response.text).toBe(302);
        return new URL(response.headers.location as string);
      };
      const sessionTokenOf = (consentPage: URL): string => {
        expect(`${consentPage.origin}${consentPage.pathname}`).toBe(`${CONSENT_UI}/agents/${agentId}`);
        return consentPage.searchParams.get('session_token') as string;
      };

      beforeAll(async () => {
        verifier = oauth.generateRandomCodeVerifier();
        state = oauth.generateRandomState();
        const url = new URL(as.authorization_endpoint as string);
        const params = {
          client_id: agentId,
          response_type: 'code',
          redirect_uri: REDIRECT,
          scope: 'mail.read',
          state,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        };
        for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
        authorizeUrl = url.toString();
      });

      it('without a grant the user is sent to the consent page, reads the detail and declines once', async () => {
        const token = sessionTokenOf(await authorize());
        const detail = await alice.get(`/api/consent/agents/${agentId}?session_token=${encodeURIComponent(token)}`);
        expect(detail.status, detail.text).toBe(200);
        expect(detail.json<{ data: { authorization_context: unknown } }>().data.authorization_context).toEqual({
          agent_id: agentId,
          principal: ALICE,
          original_url: authorizeUrl,
          expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
          expires_in: expect.any(Number) as unknown,
        });
        const denied = await alice.post(
          `/api/consent/agents/${agentId}/deny?session_token=${encodeURIComponent(token)}`,
        );
        expect(denied.status, denied.text).toBe(200);
        const back = new URL(denied.json<{ data: { redirect_url: string } }>().data.redirect_url);
        expect(back.searchParams.get('error')).toBe('access_denied');
      });

      it('a request the consent page let expire is ended at the client once', async () => {
        const token = sessionTokenOf(await authorize());
        const ended = await alice.post(
          `/api/consent/agents/${agentId}/expired?session_token=${encodeURIComponent(token)}`,
        );
        expect(ended.status, ended.text).toBe(200);
        const back = new URL(ended.json<{ data: { redirect_url: string } }>().data.redirect_url);
        expect(back.searchParams.get('error')).toBe('access_denied');
        const again = await alice.post(
          `/api/consent/agents/${agentId}/expired?session_token=${encodeURIComponent(token)}`,
        );
        expect(again.status, again.text).toBe(409);
      });

      it('the user grants on the second attempt, the flow resumes with a code, and the code is redeemed', async () => {
        const token = sessionTokenOf(await authorize());
        const granted = await alice.post(
          `/api/consent/agents/${agentId}/grants?session_token=${encodeURIComponent(token)}`,
          { granted_permission_sets: { [setId]: [serviceId] } },
        );
        expect(granted.status, granted.text).toBe(201);
        expect(granted.json<{ redirect_url: string }>().redirect_url).toBe(authorizeUrl);
        const location = await authorize();
        const client: oauth.Client = { client_id: agentId };
        const params = oauth.validateAuthResponse(as, client, location, state);
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.ClientSecretBasic(clientSecret),
          params,
          REDIRECT,
          verifier,
          insecure,
        );
        expect(response.status).toBe(200);
        const result = await oauth.processAuthorizationCodeResponse(as, client, response);
        expect(result).toMatchObject({ token_type: 'bearer', scope: 'mail.read' });
        accessToken = result.access_token;
      });
    });

    it('the user lists the grant and the delegation', async () => {
      const grants = await alice.get(`/api/consent/agents/${agentId}/grants`);
      expect(grants.status, grants.text).toBe(200);
      expect(
        grants
          .json<{ data: { granted_permission_sets: unknown }[] }>()
          .data.map((grant) => grant.granted_permission_sets),
      ).toEqual([{ [setId]: [serviceId] }]);
      const delegations = await alice.get('/api/consent/agents');
      expect(delegations.status, delegations.text).toBe(200);
      expect(delegations.json<{ data: { agent_id: string }[] }>().data.map((item) => item.agent_id)).toEqual([agentId]);
    });

    it('the agent gets a client_credentials token, and both tokens verify against the published key set', async () => {
      const client: oauth.Client = { client_id: agentId };
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(clientSecret),
        new URLSearchParams({ scope: 'mail.read' }),
        insecure,
      );
      expect(response.status).toBe(200);
      const result = await oauth.processClientCredentialsResponse(as, client, response);
      const keySet = await http(as.jwks_uri as string);
      expect(keySet.status, keySet.text).toBe(200);
      const jwks = createRemoteJWKSet(new URL(as.jwks_uri as string));
      expect((await jwtVerify(result.access_token, jwks, { issuer: base })).payload).toMatchObject({
        sub: agentId,
        scope: 'mail.read',
      });
      expect((await jwtVerify(accessToken, jwks, { issuer: base })).payload).toMatchObject({
        sub: ALICE,
        agent_id: agentId,
      });
      ownToken = result.access_token;
    });

    it('the agent introspects its token (RFC 7662), revokes it (RFC 7009), and finds it inactive', async () => {
      const client: oauth.Client = { client_id: agentId };
      const introspect = async () =>
        oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(clientSecret), ownToken, insecure),
        );
      expect(await introspect()).toMatchObject({
        active: true,
        client_id: agentId,
        sub: agentId,
        token_type: 'Bearer',
      });
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, oauth.ClientSecretBasic(clientSecret), ownToken, insecure),
      );
      expect(await introspect()).toEqual({ active: false });
    });

    it("the gateway exchanges the user's token for the third-party token (RFC 8693)", async () => {
      const response = await tokenRequest({
        grant_type: EXCHANGE,
        client_assertion_type: JWT_BEARER,
        client_assertion: await gateway.assertion(),
        subject_token: await gateway.subjectToken(ALICE, agentId),
        subject_token_type: ACCESS_TOKEN,
        resource: RESOURCE,
      });
      expect(response.status, response.text).toBe(200);
      expect(response.json()).toMatchObject({
        token_type: 'Bearer',
        issued_token_type: ACCESS_TOKEN,
        scope: 'mail.read',
        granted_permission_sets: { [setId]: [serviceId] },
      });
    });

    describe('tool approvals', () => {
      let once: string;

      it('the gateway creates an approval (201; the pending duplicate: 200) and syncs (200 with an ETag, then 304)', async () => {
        const created = await createApproval('send_email', { to: 'bob@example.com' });
        expect(created.status, created.text).toBe(201);
        once = created.json<{ data: Created }>().data.id;
        const duplicate = await createApproval('send_email', { to: 'bob@example.com' });
        expect(duplicate.status, duplicate.text).toBe(200);
        expect(duplicate.json<{ data: Created }>().data.id).toBe(once);

        const sync = `${base}/api/approvals?principal=${encodeURIComponent(ALICE)}`;
        const state = await http(sync, { headers: { 'x-client-assertion': await gateway.assertion() } });
        expect(state.status, state.text).toBe(200);
        const etag = state.headers.etag as string;
        expect(etag).toMatch(/^"v\d+"$/);
        const unchanged = await http(sync, {
          headers: {
            'x-client-assertion': await gateway.assertion(),
            'if-none-match': etag,
            'x-long-poll-timeout': '1',
          },
        });
        expect(unchanged.status, unchanged.text).toBe(304);
      });

      it('the user lists the pending approvals, reads one, previews a scope, approves it once; the gateway consumes it', async () => {
        const pending = await alice.get('/api/approvals/pending');
        expect(pending.status, pending.text).toBe(200);
        expect(pending.json<{ data: Created[] }>().data.map((approval) => approval.id)).toEqual([once]);
        const read = await alice.get(`/api/approvals/${once}`);
        expect(read.status, read.text).toBe(200);
        const preview = await alice.post(`/api/approvals/${once}/scope-preview`, {
          params_pattern: { to: '*@example.com' },
        });
        expect(preview.status, preview.text).toBe(200);
        const approved = await alice.post(`/api/approvals/${once}/approve`, { persistence: 'once' });
        expect(approved.status, approved.text).toBe(200);
        const consumed = await http(`${base}/api/approvals/${once}/consume`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await gateway.subjectToken(ALICE, agentId)}` },
        });
        expect(consumed.status, consumed.text).toBe(200);
        expect(consumed.json()).toMatchObject({ data: { id: once, consumed: true } });
      });

      it('the user approves another permanently, finds it with the permanent decisions and revokes it', async () => {
        const permanent = await newApproval('read_file', { path: '/tmp/a.txt' });
        const approved = await alice.post(`/api/approvals/${permanent}/approve`, {
          persistence: 'permanent',
          params_pattern: { path: '/tmp/*' },
        });
        expect(approved.status, approved.text).toBe(200);
        const list = await alice.get('/api/approvals/permanent');
        expect(list.status, list.text).toBe(200);
        expect(list.json<{ data: Created[] }>().data.map((approval) => approval.id)).toEqual([permanent]);
        const revoked = await alice.post(`/api/approvals/${permanent}/revoke`);
        expect(revoked.status, revoked.text).toBe(200);
      });

      it('the user denies a third one', async () => {
        const id = await newApproval('delete_file', { path: '/tmp/b.txt' });
        const denied = await alice.post(`/api/approvals/${id}/deny`, {});
        expect(denied.status, denied.text).toBe(200);
        expect(denied.json()).toMatchObject({ data: { id, status: 'denied', persistence: 'once' } });
      });
    });

    it('the agent asks Alice for one tool call (CIBA, 200), polls the token endpoint (400 authorization_pending), and Alice denies it', async () => {
      const resource = await admin.post('/api/resources', {
        display_name: 'Payments MCP',
        resource_uri: 'https://pay-mcp.example.com/mcp',
        scopes: [{ scope: 'payments.send', description: 'Send payments' }],
      });
      expect(resource.status, resource.text).toBe(201);
      const basic = `Basic ${Buffer.from(`${agentId}:${clientSecret}`).toString('base64')}`;
      const asked = await http(`${base}/oauth2/bc-authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({
          login_hint: ALICE,
          binding_message: 'W4SCT',
          authorization_details: JSON.stringify([
            {
              type: 'urn:agent-identity-broker:tool-call',
              locations: ['https://pay-mcp.example.com/mcp'],
              tool: 'send_payment',
              arguments: { amount_eur: 120 },
            },
          ]),
        }).toString(),
      });
      expect(asked.status, asked.text).toBe(200);
      const polled = await http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({
          grant_type: 'urn:openid:params:grant-type:ciba',
          auth_req_id: asked.json<{ auth_req_id: string }>().auth_req_id,
        }).toString(),
      });
      expect(polled.status, polled.text).toBe(400);
      expect(polled.json()).toMatchObject({ error: 'authorization_pending' });
      const pending = (await alice.get('/api/approvals/pending')).json<{ data: { id: string }[] }>().data;
      expect(pending).toHaveLength(1);
      expect((await alice.post(`/api/approvals/${pending[0]?.id ?? ''}/deny`)).status).toBe(200);
      expect((await admin.delete(`/api/resources/${resource.json<{ id: string }>().id}`)).status).toBe(204);
    });

    describe('authorization requests', () => {
      /** A person without a grant: the exchange is refused with the link (docs/authorization-requests.md). */
      const refusedLink = async (person: string): Promise<string> => {
        const response = await tokenRequest({
          grant_type: EXCHANGE,
          client_assertion_type: JWT_BEARER,
          client_assertion: await gateway.assertion(),
          subject_token: await gateway.subjectToken(person, agentId),
          subject_token_type: ACCESS_TOKEN,
          resource: RESOURCE,
        });
        expect(response.status, response.text).toBe(403);
        return response.json<{ authorization_request: Created }>().authorization_request.id;
      };

      it('the person reads the link and allows it; the gateway reads its state; another person denies theirs', async () => {
        const bob = new ApiClient(base, 'bob@example.com');
        const id = await refusedLink('bob@example.com');
        const read = await bob.get(`/api/authorization-requests/${id}`);
        expect(read.status, read.text).toBe(200);
        const state = await http(`${base}/api/authorization-requests/${id}/state`, {
          headers: { 'x-client-assertion': await gateway.assertion() },
        });
        expect(state.status, state.text).toBe(200);
        const allowed = await bob.post(`/api/authorization-requests/${id}/allow`, {});
        expect(allowed.status, allowed.text).toBe(200);
        const other = await refusedLink('carol@example.com');
        const denied = await new ApiClient(base, 'carol@example.com').post(`/api/authorization-requests/${other}/deny`);
        expect(denied.status, denied.text).toBe(200);
      });
    });

    it('the user reads their activity, the names it refers to and when their agents last used each service; the admin lists the events and exports a time range as NDJSON', async () => {
      const activity = await alice.get(`/api/activity?limit=10&agent_id=${agentId}`);
      expect(activity.status, activity.text).toBe(200);
      expect(Array.isArray(activity.json<{ data: unknown }>().data)).toBe(true);
      const names = await alice.get('/api/activity/names');
      expect(names.status, names.text).toBe(200);
      const lastUsed = await alice.get('/api/activity/last-used');
      expect(lastUsed.status, lastUsed.text).toBe(200);
      expect(Array.isArray(lastUsed.json<{ data: unknown }>().data)).toBe(true);
      const events = await admin.get(`/api/events?principal=${encodeURIComponent(ALICE)}&limit=10`);
      expect(events.status, events.text).toBe(200);
      expect(Array.isArray(events.json<{ items: unknown }>().items)).toBe(true);
      const exported = await http(
        `${gateway.broker.url('admin')}/api/events/export?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z`,
        { headers: { 'x-remote-user': 'admin@example.com' } },
      );
      expect(exported.status, exported.text).toBe(200);
      expect(exported.headers['content-disposition']).toMatch(/^attachment; /);
    });

    it('the admin creates, reads, replaces and lists a webhook, rotates its secret, lists its deliveries and deletes it', async () => {
      // A public https address (no DNS needed), disabled: nothing is ever sent to it.
      const body = { url: 'https://93.184.215.14/hooks', event_types: ['approval.requested'], enabled: false };
      const created = await admin.post('/api/webhooks', body);
      expect(created.status, created.text).toBe(201);
      const webhookId = created.json<Created>().id;
      const replaced = await admin.put(`/api/webhooks/${webhookId}`, {
        ...body,
        event_types: ['approval.requested', 'grant.revoked'],
      });
      expect(replaced.status, replaced.text).toBe(200);
      const read = await admin.get(`/api/webhooks/${webhookId}`);
      expect(read.status, read.text).toBe(200);
      const list = await admin.get('/api/webhooks');
      expect(list.status, list.text).toBe(200);
      const rotated = await admin.post(`/api/webhooks/${webhookId}/secret`);
      expect(rotated.status, rotated.text).toBe(200);
      const deliveries = await admin.get(`/api/webhooks/${webhookId}/deliveries`);
      expect(deliveries.status, deliveries.text).toBe(200);
      const deleted = await admin.delete(`/api/webhooks/${webhookId}`);
      expect(deleted.status, deleted.text).toBe(204);
    });

    it('the user and the admin list and revoke what an organisation allowed the agent (enterprise authorizations)', async () => {
      // Written as the JWT bearer grant writes them for a token issued on an enterprise IdP's assertion.
      const allow = (issuer: string): Promise<string> =>
        allowByOrganisation(gateway.broker, {
          principal: ALICE,
          agentId,
          issuer,
          resourceUri: RESOURCE,
          scopes: ['mail.read'],
        });
      const mine = await allow('https://idp-one.example.com');
      const theirs = await allow('https://idp-two.example.com');
      const listed = await alice.get('/api/consent/enterprise-authorizations');
      expect(listed.status, listed.text).toBe(200);
      expect(listed.json<{ data: Created[] }>().data.map((item) => item.id)).toContain(mine);
      const revoked = await alice.delete(`/api/consent/enterprise-authorizations/${mine}`);
      expect(revoked.status, revoked.text).toBe(204);
      const agentList = await admin.get(
        `/api/agents/${agentId}/enterprise-authorizations?principal=${encodeURIComponent(ALICE)}`,
      );
      expect(agentList.status, agentList.text).toBe(200);
      expect(agentList.json<{ items: Created[] }>().items.map((item) => item.id)).toEqual([theirs]);
      const adminRevoked = await admin.delete(`/api/agents/${agentId}/enterprise-authorizations/${theirs}`);
      expect(adminRevoked.status, adminRevoked.text).toBe(204);
    });

    it("the admin lists people's grants per agent and across people, revokes one, then all of the agent's", async () => {
      const ofAgent = await admin.get(`/api/agents/${agentId}/grants`);
      expect(ofAgent.status, ofAgent.text).toBe(200);
      const grant = ofAgent
        .json<{ items: { id: string; principal: string }[] }>()
        .items.find((item) => item.principal === ALICE);
      expect(grant).toBeDefined();
      const across = await admin.get(`/api/grants?principal=${encodeURIComponent(ALICE)}&service_id=${serviceId}`);
      expect(across.status, across.text).toBe(200);
      const revoked = await admin.delete(`/api/agents/${agentId}/grants/${grant?.id ?? ''}`);
      expect(revoked.status, revoked.text).toBe(204);
      const all = await admin.delete(`/api/agents/${agentId}/grants`);
      expect(all.status, all.text).toBe(200);
      expect(typeof all.json<{ revoked: unknown }>().revoked).toBe('number');
      // The person grants again: the story's last step revokes it their own way.
      const again = await alice.post(`/api/consent/agents/${agentId}/grants`, {
        granted_permission_sets: { [setId]: [serviceId] },
      });
      expect(again.status, again.text).toBe(201);
    });

    it('everything is deleted again: grant, session, client credentials, agent, permission set, service', async () => {
      const grant = await alice.delete(`/api/consent/agents/${agentId}/grants`);
      expect(grant.status, grant.text).toBe(204);
      const session = await alice.delete(`/api/third-party/${serviceId}/session`);
      expect(session.status, session.text).toBe(200);
      expect(session.json()).toMatchObject({ data: { terminated: true } });
      const credentials = await admin.delete(`/api/agents/${agentId}/client-credentials`);
      expect(credentials.status, credentials.text).toBe(204);
      const agent = await admin.delete(`/api/agents/${agentId}`);
      expect(agent.status, agent.text).toBe(204);
      const set = await admin.delete(`/api/permission-sets/${setId}`);
      expect(set.status, set.text).toBe(204);
      const service = await admin.delete(`/api/services/${serviceId}`);
      expect(service.status, service.text).toBe(204);
    });
  },
);

describe('contract coverage', () => {
  it('every operation of both documents was called and its answer checked against the document', () => {
    const documented = documentedOperations();
    // Two servers, each with operations: a document read as empty would make the comparison vacuous.
    expect(documented.filter((operation) => operation.startsWith('enduser ')).length).toBeGreaterThan(0);
    expect(documented.filter((operation) => operation.startsWith('admin ')).length).toBeGreaterThan(0);
    const covered = coveredOperations();
    expect(documented.filter((operation) => !covered.has(operation))).toEqual([]);
  });
});
