import {
  ApiClient,
  FrozenClock,
  freePort,
  http,
  startHttpsDocumentServer,
  startTestBroker,
  testBackends,
  type HttpsDocumentServer,
  type TestBroker,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const REDIRECT = 'https://agent.example.com/cb';
const OTHER_REDIRECT = 'https://elsewhere.example.net/cb';
const ALICE = 'alice@example.com';
const CONSENT_UI = 'https://consent.example.com';
const DAY = 86_400_000;

/**
 * Consent is bound to the client that asked: a person's consent is remembered per agent and
 * Client ID Metadata Document URL (and the redirect host shown), so another document URL
 * mapping to the same agent (a `*` pattern: another tenant's document) sees the consent page
 * instead of a code. `client_uris` patterns have a fixed https origin and match only a
 * document URL in normal form (no dot segments, no percent-encoding in a `*` segment).
 */
describe.each(testBackends())('CIMD consent is per client document URL on $name', (backend) => {
  let docs: HttpsDocumentServer;
  let broker: TestBroker;
  let base: string;
  let origin: string;
  let admin: ApiClient;
  let alice: ApiClient;
  let agentId: string;
  let setId: string;
  let serviceId: string;
  const clock = new FrozenClock('2026-03-01T00:00:00.000Z');

  beforeAll(async () => {
    docs = await startHttpsDocumentServer((request, response) => {
      const clientId = `https://127.0.0.1:${(request.socket.localPort ?? 0).toString()}${request.url ?? ''}`;
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: clientId,
          client_name: 'Tenant client',
          redirect_uris: [REDIRECT, OTHER_REDIRECT],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    origin = `https://127.0.0.1:${docs.port}`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
        oauth2_authorization_server: {
          cimd: { enabled: true, allowed_networks: ['127.0.0.1/32'], tls_ca_file: docs.caFile },
        },
      },
    });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
    serviceId = (
      await admin.post('/api/services', {
        display_name: 'S',
        client_id: 's',
        issuer_uri: 'https://i.example.com',
        authorization_endpoint: 'https://i.example.com/a',
        token_endpoint: 'https://i.example.com/t',
        protected_resources: ['https://s.example.com'],
      })
    ).json<{ id: string }>().id;
    setId = (
      await admin.post('/api/permission-sets', {
        name: 'Read',
        service_scopes: [{ service_id: serviceId, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
    const created = await admin.post('/api/agents', {
      display_name: 'Tenant Agent',
      redirect_uris: [REDIRECT],
      client_uris: [`${origin}/tenants/*/client.json`, `${origin}/apps/*/meta.json`],
      permission_sets: [{ permission_set_id: setId }],
    });
    expect(created.status, created.text).toBe(201);
    agentId = created.json<{ id: string }>().id;
  });

  afterAll(async () => {
    await broker?.stop();
    await docs?.stop();
  });

  async function authorize(clientId: string, redirectUri = REDIRECT) {
    const url = new URL(`${base}/oauth2/authorize`);
    const verifier = oauth.generateRandomCodeVerifier();
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'read',
      state: 'st',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return http(url.toString(), { headers: { 'x-remote-user': ALICE } });
  }

  /** The consent page's session token when the request was sent there, else undefined. */
  function consentToken(location: string | undefined): string | undefined {
    if (location === undefined || !location.startsWith(`${CONSENT_UI}/agents/${agentId}?`)) return undefined;
    return new URL(location).searchParams.get('session_token') ?? undefined;
  }

  function codeAt(location: string | undefined, redirectUri = REDIRECT): string | undefined {
    if (location === undefined || !location.startsWith(`${redirectUri}?`)) return undefined;
    return new URL(location).searchParams.get('code') ?? undefined;
  }

  /** Authorize with `clientId`, land on the consent page, allow (a grant POST with the session token). */
  async function consent(clientId: string, redirectUri = REDIRECT): Promise<void> {
    const response = await authorize(clientId, redirectUri);
    const token = consentToken(response.headers.location);
    expect(token, `${clientId}: ${response.status} ${String(response.headers.location)}`).toBeDefined();
    const granted = await alice.post(
      `/api/consent/agents/${agentId}/grants?session_token=${encodeURIComponent(token as string)}`,
      { granted_permission_sets: { [setId]: [serviceId] } },
    );
    expect(granted.status, granted.text).toBe(201);
  }

  it('sends a second document URL of the same agent to the consent page naming it; after consent, both get codes', async () => {
    const first = `${origin}/tenants/acme/client.json`;
    const second = `${origin}/tenants/mallory/client.json`;
    await consent(first);
    expect(codeAt((await authorize(first)).headers.location)).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Same agent, active grant, another document URL: the consent page, not a code.
    const asked = await authorize(second);
    expect(asked.status).toBe(302);
    expect(codeAt(asked.headers.location)).toBeUndefined();
    const token = consentToken(asked.headers.location);
    expect(token, String(asked.headers.location)).toBeDefined();
    const detail = (
      await alice.get(`/api/consent/agents/${agentId}?session_token=${encodeURIComponent(token as string)}`)
    ).json<{ data: { cimd: Record<string, unknown> } }>();
    expect(detail.data.cimd).toMatchObject({
      client_id_url: second,
      redirect_uri: REDIRECT,
      verified_domain: '127.0.0.1',
    });

    const granted = await alice.post(
      `/api/consent/agents/${agentId}/grants?session_token=${encodeURIComponent(token as string)}`,
      { granted_permission_sets: { [setId]: [serviceId] } },
    );
    expect(granted.status, granted.text).toBe(201);
    expect(codeAt((await authorize(second)).headers.location)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The first client's consent survives the grant's replacement by the second's.
    expect(codeAt((await authorize(first)).headers.location)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('binds a code to the document URL it was issued to: another client of the agent, or its UUID, cannot redeem it (invalid_grant)', async () => {
    const first = `${origin}/tenants/acme/client.json`;
    const second = `${origin}/tenants/mallory/client.json`;
    for (const presenter of [second, agentId, first]) {
      const verifier = oauth.generateRandomCodeVerifier();
      const url = new URL(`${base}/oauth2/authorize`);
      for (const [k, v] of Object.entries({
        client_id: first,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'read',
        state: 'st',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const code = codeAt((await http(url.toString(), { headers: { 'x-remote-user': ALICE } })).headers.location);
      expect(code).toBeDefined();
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code: code as string,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        client_id: presenter,
      });
      const response = await http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      if (presenter === first) {
        expect(response.status, response.text).toBe(200);
      } else {
        expect(response.status, presenter).toBe(400);
        expect(response.json()).toEqual({
          error: 'invalid_grant',
          error_description: 'the authorization code was issued to another client',
        });
      }
    }
  });

  it('asks again for a redirect host of the same document the person was not shown', async () => {
    const client = `${origin}/tenants/hosts/client.json`;
    await consent(client);
    const other = await authorize(client, OTHER_REDIRECT);
    expect(codeAt(other.headers.location, OTHER_REDIRECT)).toBeUndefined();
    expect(consentToken(other.headers.location)).toBeDefined();
    await consent(client, OTHER_REDIRECT);
    expect(codeAt((await authorize(client, OTHER_REDIRECT)).headers.location, OTHER_REDIRECT)).toMatch(
      /^[A-Za-z0-9_-]{43}$/,
    );
    expect(codeAt((await authorize(client)).headers.location)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("keeps the agent's own UUID client_id as before: a grant from the console issues its codes, and consents no document client", async () => {
    const client = `${origin}/tenants/console/client.json`;
    expect((await alice.delete(`/api/consent/agents/${agentId}/grants`)).status).toBe(204);
    const granted = await alice.post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [setId]: [serviceId] },
    });
    expect(granted.status, granted.text).toBe(201);
    expect(codeAt((await authorize(agentId)).headers.location)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(consentToken((await authorize(client)).headers.location)).toBeDefined();
  });

  it('forgets the client consents when the grant is revoked, and when an expired grant is created again', async () => {
    const client = `${origin}/tenants/revoked/client.json`;
    await consent(client);
    expect(codeAt((await authorize(client)).headers.location)).toBeDefined();
    expect((await alice.delete(`/api/consent/agents/${agentId}/grants`)).status).toBe(204);
    expect(consentToken((await authorize(client)).headers.location)).toBeDefined();
    // A grant from the console (no authorization request) does not bring the client back.
    expect(
      (await alice.post(`/api/consent/agents/${agentId}/grants`, { granted_permission_sets: { [setId]: [serviceId] } }))
        .status,
    ).toBe(201);
    expect(consentToken((await authorize(client)).headers.location)).toBeDefined();

    // An expiring grant consented for the client, then expired and created again from the console.
    const validUntil = new Date(clock.now().getTime() + DAY).toISOString();
    const asked = await authorize(client);
    const token = consentToken(asked.headers.location) as string;
    expect(
      (
        await alice.post(`/api/consent/agents/${agentId}/grants?session_token=${encodeURIComponent(token)}`, {
          granted_permission_sets: { [setId]: [serviceId] },
          valid_until: validUntil,
        })
      ).status,
    ).toBe(201);
    expect(codeAt((await authorize(client)).headers.location)).toBeDefined();
    clock.advance(2 * DAY);
    expect(
      (await alice.post(`/api/consent/agents/${agentId}/grants`, { granted_permission_sets: { [setId]: [serviceId] } }))
        .status,
    ).toBe(201);
    expect(consentToken((await authorize(client)).headers.location)).toBeDefined();
  });

  it('refuses a document URL whose * segment is a dot segment or percent-encoded, without fetching anything', async () => {
    for (const segment of ['%2e%2e', '%2E%2e', '..', '.', '%2e', 'a%2F..%2Fb', 'a%5C..']) {
      const before = [...docs.hits.keys()];
      const response = await authorize(`${origin}/apps/${segment}/meta.json`);
      expect(response.status, segment).toBe(400);
      expect(response.json<{ error: string }>().error, segment).toBe('invalid_client');
      expect([...docs.hits.keys()], segment).toEqual(before);
    }
    expect(docs.hits.get('/meta.json')).toBeUndefined();
    // The same pattern with an ordinary segment is fetched and served.
    expect(consentToken((await authorize(`${origin}/apps/ok/meta.json`)).headers.location)).toBeDefined();
    expect(docs.hits.get('/apps/ok/meta.json')).toBe(1);
  });

  it('never matches a host wildcard stored before the rule (written to the database directly), and fetches nothing', async () => {
    const legacy = (await admin.post('/api/agents', { display_name: 'Legacy' })).json<{ id: string }>().id;
    await broker.broker.runtime.database.dataSource.query('UPDATE agents SET client_uris = $1::jsonb WHERE id = $2', [
      JSON.stringify(['https://*/legacy/client.json']),
      legacy,
    ]);
    const response = await authorize(`${origin}/legacy/client.json`);
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_client',
      error_description: 'client_id is not a registered client',
    });
    expect(docs.hits.get('/legacy/client.json')).toBeUndefined();
  });

  const refused: [string, string][] = [
    ['a host wildcard (https://*/x)', 'https://*/x'],
    ['a wildcard in the host', 'https://*.example.com/client.json'],
    ['a wildcard in part of the host', 'https://tenant-*.example.com/client.json'],
    ['an http origin', 'http://agent.example.com/client.json'],
    ['a loopback http origin', 'http://127.0.0.1/client.json'],
    ['a wildcard that is not a whole path segment', 'https://agent.example.com/tenants/t-*/client.json'],
    ['a wildcard in the query', 'https://agent.example.com/client.json?tenant=*'],
    ['a dot segment', 'https://agent.example.com/tenants/../client.json'],
    ['an encoded dot segment', 'https://agent.example.com/tenants/%2e%2e/client.json'],
    ['user info', 'https://user@agent.example.com/client.json'],
    ['an origin not written in normal form', 'https://Agent.Example.com/client.json'],
    ['a default port written out', 'https://agent.example.com:443/client.json'],
    ['no path', 'https://agent.example.com'],
  ];
  for (const [name, uri] of refused) {
    it(`refuses client_uris with ${name} in the admin API (400 validation failed naming client_uris), on create and replace`, async () => {
      const id = (await admin.post('/api/agents', { display_name: 'safe' })).json<{ id: string }>().id;
      for (const response of [
        await admin.post('/api/agents', { display_name: 'x', client_uris: [uri] }),
        await admin.put(`/api/agents/${id}`, { display_name: 'x', client_uris: [`${origin}/ok.json`, uri] }),
      ]) {
        expect(response.status, uri).toBe(400);
        const payload = response.json<{ error: string; message: string; details: { field: string }[] }>();
        expect(payload.error).toBe('validation failed');
        expect(payload.message).toContain('client_uris');
        expect(payload.details.map((detail) => detail.field)).toContainEqual(expect.stringContaining('client_uris'));
      }
    });
  }

  it('accepts exact document URLs and whole-segment path wildcards on a fixed https origin', async () => {
    const uris = [
      'https://vscode.dev/oauth/client-metadata.json',
      'https://claude.ai/oauth/claude-code-client-metadata',
      'https://agent.example.com:8443/tenants/*/client.json',
      'https://agent.example.com/*/*/client.json',
      'https://agent.example.com/client.json?v=1',
    ];
    const created = await admin.post('/api/agents', { display_name: 'ok', client_uris: uris });
    expect(created.status, created.text).toBe(201);
    expect(created.json<{ client_uris: string[] }>().client_uris).toEqual(uris);
  });
});
