import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiClient,
  startOidcProvider,
  startTestBroker,
  testBackends,
  type TestBroker,
  type TestOidcProvider,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const SECRET = 'svc-secret-8c1f0e5a-do-not-leak';

let counter = 0;
function service(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    display_name: `Service ${counter}`,
    client_id: `broker-client-${counter}`,
    issuer_uri: 'https://idp.example.com',
    authorization_endpoint: 'https://idp.example.com/authorize',
    token_endpoint: 'https://idp.example.com/token',
    protected_resources: [`https://api${counter}.example.com/v1`],
    ...overrides,
  };
}

describe('admin: services', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  let idp: TestOidcProvider;

  beforeAll(async () => {
    // The issuers of these tests listen on loopback, which the discovery guard refuses unless allow-listed.
    [broker, idp] = await Promise.all([
      startTestBroker({
        servers: BOTH_SERVERS,
        config: { third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } } },
      }),
      startOidcProvider(),
    ]);
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await Promise.all([broker.stop(), idp.stop()]);
  });

  it('creates a confidential service (201): secret REDACTED, method client_secret_basic by default', async () => {
    const response = await admin.post(
      '/api/services',
      service({ client_secret: SECRET, scopes: [{ scope: 'read', description: 'Read your data' }] }),
    );
    expect(response.status).toBe(201);
    const body = response.json<Record<string, unknown>>();
    expect(body).toMatchObject({
      client_secret: 'REDACTED',
      token_endpoint_auth_method: 'client_secret_basic',
      scopes: [{ scope: 'read', description: 'Read your data' }],
      description: null,
      logo_url: null,
    });
    expect(Object.keys(body).sort()).toEqual(
      [
        'id',
        'display_name',
        'description',
        'logo_url',
        'client_id',
        'client_secret',
        'token_endpoint_auth_method',
        'issuer_uri',
        'authorization_endpoint',
        'token_endpoint',
        'scopes',
        'protected_resources',
        'callback_url',
        'created_at',
        'updated_at',
      ].sort(),
    );
    expect((await admin.get(`/api/services/${String(body.id)}`)).json()).toEqual(body);
  });

  it('names in every answer the callback URL to register at the provider: the redirect_uri the connect flow sends', async () => {
    const created = (await admin.post('/api/services', service())).json<{ id: string; callback_url: string }>();
    // The end-user server's public URL (default http://localhost:8000), never the admin server's.
    expect(created.callback_url).toBe(`http://localhost:8000/api/third-party/${created.id}/oauth2/callback`);
    const listed = (await admin.get('/api/services')).json<{ id: string; callback_url: string }[]>();
    expect(listed.find((s) => s.id === created.id)?.callback_url).toBe(created.callback_url);
    const connect = await fetch(
      `${broker.url('enduser')}/api/third-party/${created.id}/oauth2/authorize?redirect_uri=${encodeURIComponent('http://localhost:8000/connections')}`,
      { headers: { 'X-Remote-User': 'alice@example.com' }, redirect: 'manual' },
    );
    expect(connect.status).toBe(302);
    expect(new URL(connect.headers.get('location') ?? '').searchParams.get('redirect_uri')).toBe(created.callback_url);
  });

  it('creates a public service with client_secret null and method none', async () => {
    const body = (await admin.post('/api/services', service())).json();
    expect(body).toMatchObject({ client_secret: null, token_endpoint_auth_method: 'none' });
  });

  it('takes a service logo_url only as https (http on loopback): the consent pages show it as an image', async () => {
    for (const logo of ['http://cdn.example.com/logo.png', 'javascript:alert(1)', 'data:image/svg+xml,<svg/>']) {
      const response = await admin.post('/api/services', service({ logo_url: logo }));
      expect(response.status, logo).toBe(400);
      expect(response.json<{ error: string; details: { field: string }[] }>()).toMatchObject({
        error: 'validation failed',
        details: [expect.objectContaining({ field: 'logo_url' })],
      });
    }
    expect((await admin.post('/api/services', service({ logo_url: 'https://cdn.example.com/logo.png' }))).status).toBe(
      201,
    );
  });

  it('lists services as a bare array with secrets redacted', async () => {
    const list = (await admin.get('/api/services')).json<unknown>() as { client_secret: unknown }[];
    expect(Array.isArray(list)).toBe(true);
    expect(list.length).toBeGreaterThan(0);
    for (const item of list) expect([null, 'REDACTED']).toContain(item.client_secret);
  });

  it('stores protected resources without trailing slash, scheme and host lower-cased, de-duplicated', async () => {
    const body = (
      await admin.post(
        '/api/services',
        service({
          protected_resources: [
            'HTTPS://Mail.Example.com/API/',
            'https://mail.example.com/API',
            'https://files.example.com//',
          ],
        }),
      )
    ).json();
    expect(body.protected_resources).toEqual(['https://mail.example.com/API', 'https://files.example.com']);
  });

  it('refuses a protected resource another service owns with 409 conflict, whatever its spelling', async () => {
    await admin.post('/api/services', service({ protected_resources: ['https://owned.example.com/data'] }));
    const duplicate = await admin.post(
      '/api/services',
      service({ protected_resources: ['https://OWNED.example.com/data/'] }),
    );
    expect(duplicate.status).toBe(409);
    expect(duplicate.json()).toEqual({
      error: 'conflict',
      message: 'protected resource https://owned.example.com/data already belongs to another service',
    });
  });

  it('lets a service keep its own resources across a PUT', async () => {
    const created = (
      await admin.post('/api/services', service({ protected_resources: ['https://keep.example.com/a'] }))
    ).json<{ id: string }>();
    const replaced = await admin.put(
      `/api/services/${created.id}`,
      service({ protected_resources: ['https://keep.example.com/a', 'https://keep.example.com/b'] }),
    );
    expect(replaced.status).toBe(200);
    expect(replaced.json()).toMatchObject({
      protected_resources: ['https://keep.example.com/a', 'https://keep.example.com/b'],
    });
  });

  it('keeps the stored secret when PUT omits client_secret, and removes it on null', async () => {
    const created = (await admin.post('/api/services', service({ client_secret: SECRET }))).json<{ id: string }>();
    const kept = await admin.put(`/api/services/${created.id}`, service({ display_name: 'Renamed' }));
    expect(kept.status).toBe(200);
    expect(kept.json()).toMatchObject({
      display_name: 'Renamed',
      client_secret: 'REDACTED',
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const removed = await admin.put(
      `/api/services/${created.id}`,
      service({ client_secret: null, token_endpoint_auth_method: 'none' }),
    );
    expect(removed.json()).toMatchObject({ client_secret: null, token_endpoint_auth_method: 'none' });
  });

  it('never returns or logs the client secret', async () => {
    const created = await admin.post(
      '/api/services',
      service({ client_secret: SECRET, token_endpoint_auth_method: 'client_secret_post' }),
    );
    const id = created.json<{ id: string }>().id;
    const responses = [
      created,
      await admin.get(`/api/services/${id}`),
      await admin.get('/api/services'),
      await admin.put(
        `/api/services/${id}`,
        service({ client_secret: `${SECRET}-2`, token_endpoint_auth_method: 'client_secret_post' }),
      ),
    ];
    for (const response of responses) expect(response.text).not.toContain(SECRET);
    expect(broker.logs.leaked([SECRET, `${SECRET}-2`])).toEqual([]);
  });

  it('discovers missing endpoints from the issuer (a real OAuth server on loopback)', async () => {
    const response = await admin.post(
      '/api/services',
      service({ issuer_uri: idp.issuer, authorization_endpoint: undefined, token_endpoint: undefined }),
    );
    expect(response.status).toBe(201);
    expect(response.json()).toMatchObject({
      issuer_uri: idp.issuer,
      authorization_endpoint: `${idp.issuer}/auth`,
      token_endpoint: `${idp.issuer}/token`,
    });
  });

  it('keeps a given endpoint and discovers only the missing one', async () => {
    const response = await admin.post(
      '/api/services',
      service({
        issuer_uri: idp.issuer,
        authorization_endpoint: 'https://custom.example.com/authorize',
        token_endpoint: undefined,
      }),
    );
    expect(response.json()).toMatchObject({
      authorization_endpoint: 'https://custom.example.com/authorize',
      token_endpoint: `${idp.issuer}/token`,
    });
  });

  it('takes null as "none" for the optional text fields, a scope description included (read back as "")', async () => {
    const response = await admin.post(
      '/api/services',
      service({
        description: null,
        logo_url: null,
        client_secret: null,
        scopes: [{ scope: 'read', description: null }],
      }),
    );
    expect(response.status).toBe(201);
    expect(response.json()).toMatchObject({
      description: null,
      logo_url: null,
      client_secret: null,
      scopes: [{ scope: 'read', description: '' }],
    });
  });

  it('refuses discovered endpoints not written as RFC 3986 URIs (they are published as format: uri)', async () => {
    const metadata: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize|x`,
          token_endpoint: `${issuer}/token`,
        }),
      );
    });
    await new Promise<void>((resolve) => metadata.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(metadata.address() as AddressInfo).port}`;
    try {
      const response = await admin.post(
        '/api/services',
        service({ issuer_uri: issuer, authorization_endpoint: undefined, token_endpoint: undefined }),
      );
      expect(response.status).toBe(400);
      expect(response.json<{ error: string; message: string }>()).toMatchObject({
        error: 'validation failed',
        message: expect.stringContaining(`could not discover the endpoints of ${issuer}`) as unknown,
      });
    } finally {
      metadata.closeAllConnections();
      await new Promise<void>((resolve) => metadata.close(() => resolve()));
    }
  });

  it('answers 400 validation failed naming the issuer when discovery fails', async () => {
    const issuer = 'http://127.0.0.1:9/nothing-listens-here';
    const response = await admin.post(
      '/api/services',
      service({ issuer_uri: issuer, authorization_endpoint: undefined, token_endpoint: undefined }),
    );
    expect(response.status).toBe(400);
    const body = response.json<{ error: string; message: string }>();
    expect(body.error).toBe('validation failed');
    expect(body.message).toContain(`could not discover the endpoints of ${issuer}`);
  });

  it('stops reading an oversized metadata document at the cap (256 KiB) instead of buffering it', async () => {
    // A hostile issuer streams an endless document without Content-Length, with backpressure.
    const written: number[] = [];
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const hostile: Server = createServer((_request, response) => {
      const index = written.push(0) - 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"issuer":"');
      const pump = (): void => {
        while (!response.destroyed && (written[index] ?? 0) < 64 * 1024 * 1024) {
          written[index] = (written[index] ?? 0) + chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end('"}');
      };
      response.on('close', () => response.destroy());
      pump();
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      const mark = broker.logs.lines.length;
      const response = await admin.post(
        '/api/services',
        service({ issuer_uri: issuer, authorization_endpoint: undefined, token_endpoint: undefined }),
      );
      expect(response.status).toBe(400);
      const body = response.json<{ error: string; message: string }>();
      expect(body.error).toBe('validation failed');
      // One generic reason in the answer; the detail (the cap, at each location) only in the log.
      expect(body.message).toContain(
        `could not discover the endpoints of ${issuer} (no usable authorization server metadata; the reason is in the broker's log)`,
      );
      expect(body.message).not.toContain('262144');
      const logged = broker.logs.lines.slice(mark).join('\n');
      expect(logged).toContain(`${issuer}/.well-known/oauth-authorization-server: answer larger than 262144 bytes`);
      expect(logged).toContain(`${issuer}/.well-known/openid-configuration: answer larger than 262144 bytes`);
      // Both metadata locations were tried; each connection was dropped long before 64 MiB.
      expect(written).toHaveLength(2);
      for (const bytes of written) expect(bytes).toBeLessThan(16 * 1024 * 1024);
    } finally {
      hostile.closeAllConnections();
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
    }
  });

  it('answers every discovery failure with the same generic reason, the detail only in the log', async () => {
    const answers: string[] = [];
    for (const issuer of ['http://127.0.0.1:9/refused', `${idp.issuer}/no-such-tenant`]) {
      const mark = broker.logs.lines.length;
      const response = await admin.post(
        '/api/services',
        service({ issuer_uri: issuer, authorization_endpoint: undefined, token_endpoint: undefined }),
      );
      expect(response.status).toBe(400);
      const body = response.json<{ message: string; details: unknown }>();
      expect(body.details).toEqual([{ field: 'issuer_uri', problem: `discovery of ${issuer} failed` }]);
      answers.push(body.message.replace(issuer, '<issuer>'));
      expect(broker.logs.lines.slice(mark).join('\n')).toContain(
        `issuer discovery of ${issuer} failed (${issuer.replace(/\/[^/]*$/, '')}`,
      );
    }
    // A refused connection and a 404 cannot be told apart from the answer.
    expect(answers[0]).toBe(answers[1]);
    expect(answers[0]).not.toMatch(/ECONNREFUSED|unreachable|answered 404/);
  });

  it('deletes a service (204, then 404) and refuses while a permission set covers it (409)', async () => {
    const loose = (await admin.post('/api/services', service())).json<{ id: string }>();
    expect((await admin.delete(`/api/services/${loose.id}`)).status).toBe(204);
    const gone = await admin.get(`/api/services/${loose.id}`);
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ error: 'service not found', message: `no service ${loose.id}` });

    const covered = (await admin.post('/api/services', service())).json<{ id: string }>();
    await admin.post('/api/permission-sets', {
      name: `covers ${covered.id}`,
      service_scopes: [{ service_id: covered.id, scopes: ['read'] }],
    });
    const refused = await admin.delete(`/api/services/${covered.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json<{ error: string }>().error).toBe('conflict');
  });

  it('answers 404 service not found for unknown ids and 400 invalid request for malformed ones', async () => {
    const unknown = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    for (const response of [
      await admin.get(`/api/services/${unknown}`),
      await admin.put(`/api/services/${unknown}`, service()),
      await admin.delete(`/api/services/${unknown}`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.json<{ error: string }>().error).toBe('service not found');
    }
    expect((await admin.get('/api/services/123')).json<{ error: string }>().error).toBe('invalid request');
  });

  describe('validation', () => {
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['missing client_id', service({ client_id: undefined }), 'invalid request body', 'client_id'],
      ['missing issuer_uri', service({ issuer_uri: undefined }), 'invalid request body', 'issuer_uri'],
      ['non-http issuer_uri', service({ issuer_uri: 'ftp://idp.example.com' }), 'validation failed', 'issuer_uri'],
      [
        'relative protected resource',
        service({ protected_resources: ['/v1'] }),
        'validation failed',
        'protected_resources.0',
      ],
      [
        'protected resource with fragment',
        service({ protected_resources: ['https://x.example.com/#a'] }),
        'validation failed',
        'protected_resources.0',
      ],
      [
        'unknown auth method',
        service({ token_endpoint_auth_method: 'private_key_jwt' }),
        'validation failed',
        'token_endpoint_auth_method',
      ],
      [
        'client_secret_basic without a secret',
        service({ token_endpoint_auth_method: 'client_secret_basic' }),
        'validation failed',
        'client_secret',
      ],
      [
        'none with a secret',
        service({ token_endpoint_auth_method: 'none', client_secret: 'x' }),
        'validation failed',
        'client_secret',
      ],
      ['scope with a space', service({ scopes: [{ scope: 'a b' }] }), 'validation failed', 'scope'],
      ['unknown field', service({ secret: 'x' }), 'invalid request body', 'secret'],
      // Lists and enumerations may be omitted, but null is not "omitted" (the document does not allow it).
      ['null scopes', service({ scopes: null }), 'invalid request body', 'scopes'],
      [
        'null protected_resources',
        service({ protected_resources: null }),
        'invalid request body',
        'protected_resources',
      ],
      [
        'null token_endpoint_auth_method',
        service({ token_endpoint_auth_method: null }),
        'validation failed',
        'token_endpoint_auth_method',
      ],
      // URLs are published as `format: uri`, so one the URL parser takes but RFC 3986 does not is refused.
      [
        'issuer_uri not written as an RFC 3986 URI',
        service({ issuer_uri: 'https://idp.example.com/a|b' }),
        'validation failed',
        'issuer_uri',
      ],
      [
        'token_endpoint not written as an RFC 3986 URI',
        service({ token_endpoint: 'https://idp.example.com/{token}' }),
        'validation failed',
        'token_endpoint',
      ],
      [
        'protected resource not written as an RFC 3986 URI',
        service({ protected_resources: ['https://x.example.com/a|b'] }),
        'validation failed',
        'protected_resources.0',
      ],
    ];
    for (const [name, body, error, field] of cases) {
      it(`rejects ${name} with 400 ${error}`, async () => {
        const response = await admin.post('/api/services', body);
        expect(response.status).toBe(400);
        const payload = response.json<{ error: string; message: string }>();
        expect(payload.error).toBe(error);
        expect(payload.message).toContain(field);
      });
    }
  });
});

describe.each(testBackends())('admin: concurrent duplicate protected resources on $name', (backend) => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { storage: await backend.storage() } });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('lets exactly one of two racing services own the URI (unique index, not check-then-insert)', async () => {
    const admin = new ApiClient(broker.url('admin'));
    for (let round = 0; round < 5; round += 1) {
      const uri = `https://race${round}.example.com/api`;
      const responses = await Promise.all([
        admin.post('/api/services', service({ protected_resources: [uri] })),
        admin.post('/api/services', service({ protected_resources: [`${uri}/`] })),
      ]);
      expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
      const owners = ((await admin.get('/api/services')).json<unknown>() as { protected_resources: string[] }[]).filter(
        (s) => s.protected_resources.includes(uri),
      );
      expect(owners).toHaveLength(1);
    }
  });
});

describe('admin: issuer discovery address guard', () => {
  let broker: TestBroker;
  let issuerServer: Server;
  let issuer: string;
  let requests = 0;

  beforeAll(async () => {
    // Valid metadata on loopback: without the guard, discovery from it would succeed.
    issuerServer = createServer((request, response) => {
      requests += 1;
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token` }),
        );
    });
    await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
    // Default configuration: third_party_oauth2.discovery.allowed_networks is empty.
    broker = await startTestBroker({ servers: BOTH_SERVERS });
  });

  afterAll(async () => {
    await broker.stop();
    issuerServer.closeAllConnections();
    await new Promise<void>((resolve) => issuerServer.close(() => resolve()));
  });

  it('refuses to fetch metadata from loopback, private, link-local and other special-use addresses, before connecting', async () => {
    const admin = new ApiClient(broker.url('admin'));
    const port = new URL(issuer).port;
    for (const target of [
      issuer,
      `http://localhost:${port}`,
      `http://[::ffff:127.0.0.1]:${port}`,
      'http://169.254.169.254/latest',
      'http://10.0.0.8',
      'http://[::1]:9',
      'https://192.168.1.1/idp',
    ]) {
      const mark = broker.logs.lines.length;
      const response = await admin.post(
        '/api/services',
        service({ issuer_uri: target, authorization_endpoint: undefined, token_endpoint: undefined }),
      );
      expect(response.status, target).toBe(400);
      const body = response.json<{ error: string; message: string }>();
      expect(body.error).toBe('validation failed');
      expect(body.message).toContain('no usable authorization server metadata');
      expect(body.message).not.toContain('special-use');
      expect(broker.logs.lines.slice(mark).join('\n'), target).toContain('special-use address');
    }
    expect(requests).toBe(0);
  });

  it('discovers from a special-use network listed in third_party_oauth2.discovery.allowed_networks', async () => {
    const allowed = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { third_party_oauth2: { discovery: { allowed_networks: '127.0.0.1/32' } } },
    });
    try {
      const response = await new ApiClient(allowed.url('admin')).post(
        '/api/services',
        service({ issuer_uri: issuer, authorization_endpoint: undefined, token_endpoint: undefined }),
      );
      expect(response.status, response.text).toBe(201);
      expect(response.json()).toMatchObject({
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
      });
    } finally {
      await allowed.stop();
    }
  });
});
