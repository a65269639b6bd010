import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { http, startTestBroker, type HttpResponse, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API } from '../../apps/admin-api/src/admin-api.server';
import { USER_API } from '../../apps/user-api/src/user-api.server';

/**
 * The end-user server serves the built console at the consent UI paths, with history fallback for
 * those paths only, cacheable hashed assets and the console's security headers; everything else keeps the API's
 * answers and 404 envelope.
 */

const CONSOLE_DIR = resolve('dist/console');
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data: http://localhost:* http://127.0.0.1:*; " +
  "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const UUID = '0b6a2f4e-8d1c-4f3a-9e2b-5c7d8e9f0a1b';

/** The built console's files; a missing build fails loudly instead of skipping (npm test builds first). */
function builtConsole(): { index: string; script: string; stylesheet: string } {
  if (!existsSync(join(CONSOLE_DIR, 'index.html'))) {
    throw new Error(
      `the console is not built (${CONSOLE_DIR}/index.html is missing): run npm run build first (npm test does)`,
    );
  }
  const assets = readdirSync(join(CONSOLE_DIR, 'assets'));
  const script = assets.find((name) => name.endsWith('.js'));
  const stylesheet = assets.find((name) => name.endsWith('.css'));
  if (script === undefined || stylesheet === undefined)
    throw new Error(`${CONSOLE_DIR}/assets holds no .js or .css: run npm run build`);
  return { index: readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8'), script, stylesheet };
}

/** A request whose path goes out byte for byte (no URL normalisation of `..`), as a hostile client sends it. */
function rawRequest(
  base: string,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest({ host: hostname, port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolvePromise({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function expectConsoleHeaders(response: { headers: IncomingHttpHeaders }): void {
  expect(response.headers['content-security-policy']).toBe(CSP);
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.headers['referrer-policy']).toBe('no-referrer');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
}

function expectNotFoundEnvelope(response: { status: number; headers: IncomingHttpHeaders; text: string }): void {
  expect(response.status).toBe(404);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(JSON.parse(response.text) as object).sort()).toEqual(['error', 'message']);
  expect(response.headers['content-security-policy']).toBeUndefined();
}

function expectIndex(response: HttpResponse, index: string): void {
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(response.headers['cache-control']).toBe('no-cache');
  expect(response.text).toBe(index);
  expectConsoleHeaders(response);
}

describe('the console served by the end-user server', () => {
  let broker: TestBroker;
  let built: ReturnType<typeof builtConsole>;
  let url: string;

  beforeAll(async () => {
    built = builtConsole();
    broker = await startTestBroker({ servers: [USER_API, ADMIN_API] });
    url = broker.url('enduser');
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers the consent page (with its session_token) with index.html, no-cache and the security headers', async () => {
    const response = await http(`${url}/agents/${UUID}?session_token=x`);
    expectIndex(response, built.index);
    const policy = String(response.headers['content-security-policy']);
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(policy).toContain("frame-ancestors 'none'");
  });

  it('falls back to index.html for every console path, with or without a query string, for GET and HEAD', async () => {
    const paths = [
      '/agents',
      `/agents/${UUID}`,
      '/agents/not-a-uuid',
      '/connections',
      '/connections?error=access_denied&error_description=x',
      '/connections?success=true&service_id=s',
      '/approvals',
      '/approvals/remembered',
      `/approvals/${UUID}`,
      '/agents?x=1',
      '/activity',
      '/activity?type=token.exchanged',
      `/authorization-requests/${UUID}`,
      `/authorization-requests/${UUID}?success=true&service_id=s`,
      '/authorization-requests/not-a-uuid',
    ];
    for (const path of paths) expectIndex(await http(`${url}${path}`), built.index);
    const head = await http(`${url}/approvals`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(built.index)));
    expectConsoleHeaders(head);
  });

  it('serves hashed assets immutable, with their content type and the security headers, gzipped when asked', async () => {
    const script = await http(`${url}/assets/${built.script}`);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.text).toBe(readFileSync(join(CONSOLE_DIR, 'assets', built.script), 'utf8'));
    expectConsoleHeaders(script);

    const stylesheet = await http(`${url}/assets/${built.stylesheet}`);
    expect(stylesheet.status).toBe(200);
    expect(stylesheet.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(stylesheet.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expectConsoleHeaders(stylesheet);

    const zipped = await new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolvePromise, reject) => {
      httpRequest(
        `${url}/assets/${built.script}`,
        { headers: { 'accept-encoding': 'gzip, br' }, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolvePromise({ headers: res.headers, body: Buffer.concat(chunks) }));
        },
      )
        .on('error', reject)
        .end();
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(zipped.body).equals(readFileSync(join(CONSOLE_DIR, 'assets', built.script)))).toBe(true);
  });

  it('keeps the API 404 envelope for unknown API paths, without the console headers', async () => {
    const response = await http(`${url}/api/nope`);
    expectNotFoundEnvelope(response);
    expect(response.json()).toEqual({ error: 'not_found', message: expect.any(String) as unknown });
  });

  it('keeps every API, OAuth2, discovery, health and document answer', async () => {
    const health = await http(`${url}/health`);
    expect(health.status).toBe(200);
    expect(health.headers['content-security-policy']).toBeUndefined();
    const metadata = await http(`${url}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect(metadata.headers['content-type']).toMatch(/^application\/json/);
    expect((await http(`${url}/oauth2/jwks.json`)).status).toBe(200);
    expect((await http(`${url}/openapi.json`)).headers['content-type']).toMatch(/^application\/json/);
    const me = await http(`${url}/api/me`);
    expect(me.status).toBe(401);
    expect(me.headers['content-security-policy']).toBeUndefined();
  });

  it('answers the API 404 envelope for paths that only look like console paths', async () => {
    const paths = [
      '/index.html',
      '/agentsX',
      '/agents/',
      '/agents/a/b',
      '/connections/x',
      '/approvals/a/b',
      '/approvalsX',
      '/activity/x',
      '/activityX',
      '/authorization-requests',
      '/authorization-requests/',
      '/authorization-requests/a/b',
      '/assets/',
      '/assets/nope.js',
      '/assets',
      '/favicon.ico',
      '/console/agents',
    ];
    for (const path of paths) expectNotFoundEnvelope(await http(`${url}${path}`));
  });

  it('answers a browser (HTML preferred) the console page with the status kept: 404 for an unknown path, 400 or 401 for a refused authorization request', async () => {
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const signedIn = { ...browser, 'x-remote-user': 'alice@example.com' };
    for (const path of ['/settings', '/agents/a/b', '/approvalsX']) {
      const page = await rawRequest(url, path, 'GET', browser);
      expect(page.status, path).toBe(404);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.text).toContain('<div id="root"></div>');
      expect(page.text).not.toContain('broker-error');
      expectConsoleHeaders(page);
    }
    // RFC 6749 §4.1.2.1: an unknown client or unregistered redirect_uri is never redirected; the page names the error
    // by its code from a fixed list, never by text from the request.
    const unknownClient = await rawRequest(
      url,
      `/oauth2/authorize?client_id=${UUID}&redirect_uri=https%3A%2F%2Fevil.example%2F%3Cscript%3E&response_type=code`,
      'GET',
      signedIn,
    );
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(unknownClient.text).toContain('<meta name="broker-error" content="invalid_client">');
    expect(unknownClient.text).not.toContain('evil.example');
    expectConsoleHeaders(unknownClient);
    const malformed = await rawRequest(url, '/oauth2/authorize?client_id=%3Cb%3Ex%3C%2Fb%3E', 'GET', signedIn);
    expect(malformed.status).toBe(400);
    expect(malformed.text).toMatch(/<meta name="broker-error" content="invalid_(client|request)">/);
    expect(malformed.text).not.toContain('<b>x');
    // No identity from the sign-in proxy: 401 kept, the page says so.
    const anonymous = await rawRequest(url, `/oauth2/authorize?client_id=${UUID}`, 'GET', browser);
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).toContain('<meta name="broker-error" content="unauthenticated">');
    // Not for the API's own paths, assets or a non-GET.
    expectNotFoundEnvelope(await rawRequest(url, '/api/nope', 'GET', browser));
    expectNotFoundEnvelope(await rawRequest(url, '/assets/nope.js', 'GET', browser));
    const discovery = await rawRequest(url, '/.well-known/nope', 'GET', browser);
    expect(discovery.status).toBe(404);
    expect(discovery.headers['content-type']).toMatch(/^application\/json/);
    expectNotFoundEnvelope(await rawRequest(url, '/settings', 'POST', browser));
  });

  it('keeps the exact JSON answers for API clients (JSON or no Accept, or */*) at the same addresses', async () => {
    for (const accept of [undefined, 'application/json', '*/*', 'application/json, text/html;q=0.9']) {
      const headers: Record<string, string> = {
        'x-remote-user': 'alice@example.com',
        ...(accept === undefined ? {} : { accept }),
      };
      expectNotFoundEnvelope(await http(`${url}/settings`, { headers }));
      const unknownClient = await http(
        `${url}/oauth2/authorize?client_id=${UUID}&redirect_uri=https%3A%2F%2Fagent.example.com%2Fcb&response_type=code`,
        { headers },
      );
      expect(unknownClient.status).toBe(400);
      expect(unknownClient.headers['content-type']).toMatch(/^application\/json/);
      expect(unknownClient.json()).toEqual({
        error: 'invalid_client',
        error_description: 'client_id is not a registered client',
      });
      const anonymous = await http(`${url}/oauth2/authorize?client_id=${UUID}`, {
        headers: accept === undefined ? {} : { accept },
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('sends the root to the console (302 /agents, no body)', async () => {
    const root = await http(`${url}/`);
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/agents');
    expect(root.text).toBe('');
    expect(root.headers['x-frame-options']).toBe('DENY');
  });

  it('answers only GET and HEAD at console paths', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) expectNotFoundEnvelope(await http(`${url}/agents`, { method }));
  });

  it('refuses path traversal out of the assets folder, encoded or not', async () => {
    const paths = [
      '/assets/../../package.json',
      '/assets/../index.html',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/assets/..%2f..%2fpackage.json',
      '/assets/..%5c..%5cpackage.json',
      '/assets/%2e%2e%2fassets%2f' + built.script,
      '/assets//etc/passwd',
      '/assets/./' + built.script,
    ];
    for (const path of paths) {
      const response = await rawRequest(url, path);
      expectNotFoundEnvelope(response);
      expect(response.text).not.toContain('"devDependencies"');
    }
  });

  it('is not served by the admin server (which serves the admin console at its own pages)', async () => {
    const adminPage = await http(`${broker.url('admin')}/agents`);
    expect(adminPage.text).not.toBe(built.index);
    expectNotFoundEnvelope(await http(`${broker.url('admin')}/connections`));
    expectNotFoundEnvelope(await http(`${broker.url('admin')}/assets/${built.script}`));
  });

  it('logs that the console is served', () => {
    expect(broker.logs.text).toContain('console served at the consent UI paths');
  });
});

describe('the console when consent_ui_url is elsewhere', () => {
  let broker: TestBroker;
  let script: string;

  beforeAll(async () => {
    script = builtConsole().script;
    broker = await startTestBroker({
      servers: [USER_API],
      config: { server: { enduser: { consent_ui_url: 'https://consent.example.com' } } },
    });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('serves no console path: each is the API 404 envelope', async () => {
    const url = broker.url('enduser');
    for (const path of [
      '/agents',
      `/agents/${UUID}?session_token=x`,
      '/connections',
      '/approvals/remembered',
      `/assets/${script}`,
    ]) {
      expectNotFoundEnvelope(await http(`${url}${path}`));
    }
    expect(broker.logs.text).toContain('consent_ui_url is elsewhere');
  });
});

describe('the console when it was not built', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: [USER_API],
      config: { server: { enduser: { console: { static_dir: '/nonexistent/console' } } } },
    });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers the API 404 envelope at console paths and logs one warning saying to run npm run build', async () => {
    expectNotFoundEnvelope(await http(`${broker.url('enduser')}/agents`));
    const warnings = broker.logs
      .records()
      .filter((record) => record.level === 'warn' && String(record.msg).includes('npm run build'));
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.msg)).toContain('console not served');
  });
});
