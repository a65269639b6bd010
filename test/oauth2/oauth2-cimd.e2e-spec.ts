import {
  ApiClient,
  freePort,
  http,
  startHttpsDocumentServer,
  startTestBroker,
  type HttpsDocumentServer,
  type TestBroker,
} from '@broker/testing';
import { AgentRepository } from '@broker/persistence';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const REDIRECT = 'https://agent.example.com/cb';
const ALICE = 'alice@example.com';

describe('Client ID Metadata Documents', () => {
  let docs: HttpsDocumentServer;
  let broker: TestBroker;
  let base: string;
  let origin: string;

  const document = (path: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    client_id: `${origin}${path}`,
    client_name: 'Doc Agent',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    logo_uri: 'https://agent.example.com/logo.png',
    ...extra,
  });

  beforeAll(async () => {
    docs = await startHttpsDocumentServer((request, response) => {
      const url = request.url ?? '';
      if (url === '/slow.json') {
        setTimeout(
          () =>
            response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document('/slow.json'))),
          1_500,
        );
        return;
      }
      if (url === '/redirect.json') {
        response.writeHead(302, { location: '/client.json' }).end();
        return;
      }
      if (url === '/huge.json') {
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(document('/huge.json', { padding: 'x'.repeat(10_000) })));
        return;
      }
      if (url === '/other-id.json') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document('/client.json')));
        return;
      }
      if (url === '/javascript-redirect.json') {
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(document(url, { redirect_uris: [REDIRECT, 'javascript:alert(document.domain)//x'] })));
        return;
      }
      if (url === '/javascript-logo.json') {
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(document(url, { logo_uri: 'javascript:alert(document.domain)' })));
        return;
      }
      if (url === '/data-logo.json') {
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(document(url, { logo_uri: 'data:image/svg+xml,<svg onload=alert(1)>' })));
        return;
      }
      if (url === '/secret.json') {
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(document('/secret.json', { token_endpoint_auth_method: 'client_secret_basic' })));
        return;
      }
      response
        .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' })
        .end(JSON.stringify(document(url)));
    });
    origin = `https://127.0.0.1:${docs.port}`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
        oauth2_authorization_server: {
          cimd: {
            enabled: true,
            fetch_timeout: '500ms',
            max_response_bytes: 2048,
            allowed_networks: ['127.0.0.1/32'],
            tls_ca_file: docs.caFile,
          },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    await admin.post('/api/agents', {
      display_name: 'Doc Agent',
      client_uris: [
        `${origin}/client.json`,
        `${origin}/slow.json`,
        `${origin}/redirect.json`,
        `${origin}/huge.json`,
        `${origin}/other-id.json`,
        `${origin}/secret.json`,
        `${origin}/javascript-redirect.json`,
        `${origin}/javascript-logo.json`,
        `${origin}/data-logo.json`,
      ],
    });
    await admin.post('/api/agents', {
      display_name: 'Pattern Agent',
      client_uris: [`${origin}/tenants/*/client.json`],
    });
    await admin.post('/api/agents', { display_name: 'Shared A', client_uris: [`${origin}/shared/*/client.json`] });
    await admin.post('/api/agents', { display_name: 'Shared B', client_uris: [`${origin}/shared/*/client.json`] });
  });

  afterAll(async () => {
    await broker.stop();
    await docs.stop();
  });

  async function authorize(clientId: string, verifier = oauth.generateRandomCodeVerifier()) {
    const url = new URL(`${base}/oauth2/authorize`);
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'read',
      state: 'st',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return http(url.toString(), { headers: { 'x-remote-user': ALICE } });
  }

  it('accepts a document client: consent carries the CIMD block; after the grant, a code; the token needs no secret', async () => {
    const clientId = `${origin}/client.json`;
    const first = await authorize(clientId);
    expect(first.status, first.text).toBe(302);
    const consent = new URL(first.headers.location as string);
    const token = consent.searchParams.get('session_token') as string;
    const agentId = consent.pathname.split('/').at(-1) as string;
    const detail = (
      await new ApiClient(base, ALICE).get(`/api/consent/agents/${agentId}?session_token=${encodeURIComponent(token)}`)
    ).json<{ data: { cimd: unknown } }>();
    expect(detail.data.cimd).toEqual({
      client_id_url: clientId,
      redirect_uri: REDIRECT,
      verified_domain: '127.0.0.1',
      requested_scopes: ['read'],
      logo_uri: 'https://agent.example.com/logo.png',
    });

    // A grant (here with no permission set: the agent has none) is needed for a code; give one through the admin-registered set.
    const admin = new ApiClient(broker.url('admin'));
    const service = (
      await admin.post('/api/services', {
        display_name: 'S',
        client_id: 's',
        issuer_uri: 'https://i.example.com',
        authorization_endpoint: 'https://i.example.com/a',
        token_endpoint: 'https://i.example.com/t',
        protected_resources: ['https://cimd-s.example.com'],
      })
    ).json<{ id: string }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'CIMD set',
        service_scopes: [{ service_id: service, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
    const agent = (await admin.get(`/api/agents/${agentId}`)).json<Record<string, unknown>>();
    await admin.put(`/api/agents/${agentId}`, {
      display_name: agent.display_name,
      client_uris: agent.client_uris,
      permission_sets: [{ permission_set_id: set }],
    });
    const granted = await new ApiClient(base, ALICE).post(
      `/api/consent/agents/${agentId}/grants?session_token=${encodeURIComponent(token)}`,
      { granted_permission_sets: { [set]: [service] } },
    );
    expect(granted.status).toBe(201);

    const verifier = oauth.generateRandomCodeVerifier();
    const second = await authorize(clientId, verifier);
    const code = new URL(second.headers.location as string).searchParams.get('code') as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const tokenResponse = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
        client_id: clientId,
      }).toString(),
    });
    expect(tokenResponse.status, tokenResponse.text).toBe(200);
    expect(tokenResponse.json<{ access_token: string }>().access_token.split('.')).toHaveLength(3);
  });

  it('binds a code to its agent: a document URL of another agent cannot redeem it (invalid_grant)', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const issued = await authorize(`${origin}/client.json`, verifier);
    const code = new URL(issued.headers.location as string).searchParams.get('code') as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: `${origin}/tenants/acme/client.json`,
    };
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'the authorization code was issued to another client',
    });
  });

  it('answers an unauthenticated authorization_code request with a URL client_id without scanning every agent', async () => {
    const list = vi.spyOn(AgentRepository.prototype, 'list');
    try {
      const mark = broker.logs.lines.length;
      for (const clientId of [`${origin}/nobody.json`, `${origin}/client.json`, `${origin}/tenants/x/client.json`]) {
        const form = {
          grant_type: 'authorization_code',
          code: 'not-a-code',
          redirect_uri: REDIRECT,
          code_verifier: oauth.generateRandomCodeVerifier(),
          client_id: clientId,
        };
        const response = await http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(form).toString(),
        });
        expect(response.status).toBe(400);
        expect(response.json<{ error: string }>().error).toBe('invalid_grant');
      }
      expect(list).not.toHaveBeenCalled();
      // One statement each: the code lookup (by its digest, indexed).
      const lines = broker.logs
        .records()
        .slice(mark)
        .filter((record) => record.route === '/oauth2/token');
      expect(lines.map((record) => record.db_queries)).toEqual([1, 1, 1]);
    } finally {
      list.mockRestore();
    }
  });

  it('serves a cached document without refetching it', async () => {
    const before = docs.hits.get('/client.json') ?? 0;
    await authorize(`${origin}/client.json`);
    await authorize(`${origin}/client.json`);
    expect(docs.hits.get('/client.json')).toBe(before);
    expect(before).toBe(1);
  });

  it('resolves the agent by a whole-segment * pattern', async () => {
    const response = await authorize(`${origin}/tenants/acme/client.json`);
    expect(response.status).toBe(302);
    expect((await authorize(`${origin}/tenants/acme/extra/client.json`)).json<{ error: string }>().error).toBe(
      'invalid_client',
    );
  });

  it('refuses a document URL that matches more than one agent (invalid_client)', async () => {
    const response = await authorize(`${origin}/shared/acme/client.json`);
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_client',
      error_description: 'client_id matches more than one client',
    });
  });

  const refusals: [string, string, string][] = [
    ['a redirect (not followed)', '/redirect.json', 'invalid_client'],
    ['an oversize document', '/huge.json', 'invalid_client'],
    ['a slow document', '/slow.json', 'invalid_client'],
    ['a document naming another client_id', '/other-id.json', 'invalid_client'],
    ['a document with a shared-secret auth method', '/secret.json', 'invalid_client'],
    ['an unregistered document URL', '/nobody.json', 'invalid_client'],
    ['a document listing a javascript: redirect_uri', '/javascript-redirect.json', 'invalid_client'],
    ['a document with a javascript: logo_uri', '/javascript-logo.json', 'invalid_client'],
    ['a document with a data: logo_uri', '/data-logo.json', 'invalid_client'],
  ];
  for (const [name, path, error] of refusals) {
    it(`refuses ${name} with 400 ${error}`, async () => {
      const response = await authorize(`${origin}${path}`);
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe(error);
    });
  }
  it('remembers a refused document for a while instead of fetching it on every request (cimd.cache.failure_ttl)', async () => {
    const before = docs.hits.get('/javascript-logo.json') ?? 0;
    expect(before).toBe(1);
    for (let i = 0; i < 3; i += 1)
      expect((await authorize(`${origin}/javascript-logo.json`)).json<{ error: string }>().error).toBe(
        'invalid_client',
      );
    expect(docs.hits.get('/javascript-logo.json')).toBe(before);
  });
});

describe('Client ID Metadata Documents: SSRF guard', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { oauth2_authorization_server: { cimd: { enabled: true, fetch_timeout: '1s' } } },
    });
    const admin = new ApiClient(broker.url('admin'));
    await admin.post('/api/agents', {
      display_name: 'Targets',
      client_uris: [
        'https://127.0.0.1/client.json',
        'https://169.254.169.254/latest/meta-data',
        'https://localhost/client.json',
        'https://[::1]/client.json',
        'https://10.0.0.8/client.json',
      ],
    });
  });

  afterAll(async () => {
    await broker.stop();
  });

  for (const target of [
    'https://127.0.0.1/client.json',
    'https://169.254.169.254/latest/meta-data',
    'https://localhost/client.json',
    'https://[::1]/client.json',
    'https://10.0.0.8/client.json',
  ]) {
    it(`refuses to fetch ${target}`, async () => {
      const url = new URL(`${broker.url('enduser')}/oauth2/authorize`);
      for (const [k, v] of Object.entries({
        client_id: target,
        response_type: 'code',
        redirect_uri: REDIRECT,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({
        error: 'invalid_client',
        error_description: 'the client metadata document host is not allowed',
      });
    });
  }
});

describe('Client ID Metadata Documents in hybrid mode', () => {
  it('serves document clients locally at both endpoints (never sent upstream)', async () => {
    const docs = await startHttpsDocumentServer((request, response) => {
      const origin = `https://127.0.0.1:${(request.socket.localPort ?? 0).toString()}`;
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: `${origin}${request.url ?? ''}`,
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    const origin = `https://127.0.0.1:${docs.port}`;
    const upstream = 'http://127.0.0.1:9';
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        oauth2_authorization_server: {
          mode: 'hybrid',
          proxy: {
            upstream_authorize_endpoint: `${upstream}/auth`,
            upstream_token_endpoint: `${upstream}/token`,
            upstream_jwks_uri: `${upstream}/jwks`,
          },
          cimd: { enabled: true, allowed_networks: ['127.0.0.1/32'], tls_ca_file: docs.caFile },
        },
      },
    });
    try {
      await new ApiClient(broker.url('admin')).post('/api/agents', {
        display_name: 'Doc',
        client_id: 'also-upstream',
        client_uris: [`${origin}/client.json`],
      });
      const url = new URL(`${broker.url('enduser')}/oauth2/authorize`);
      for (const [k, v] of Object.entries({
        client_id: `${origin}/client.json`,
        response_type: 'code',
        redirect_uri: REDIRECT,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const authorize = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
      expect(authorize.status).toBe(302);
      expect(authorize.headers.location).toContain('/agents/');
      // A bad code for a document client is the local server's invalid_grant, not the proxy's.
      const token = await http(`${broker.url('enduser')}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'nope',
          redirect_uri: REDIRECT,
          code_verifier: oauth.generateRandomCodeVerifier(),
          client_id: `${origin}/client.json`,
        }).toString(),
      });
      expect(token.status).toBe(400);
      expect(token.json<{ error: string }>().error).toBe('invalid_grant');
    } finally {
      await broker.stop();
      await docs.stop();
    }
  });
});
