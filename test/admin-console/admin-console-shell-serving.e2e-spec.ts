import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { http, startTestBroker, type HttpResponse, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API } from '../../apps/admin-api/src/admin-api.server';
import { USER_API } from '../../apps/user-api/src/user-api.server';

/**
 * The admin server serves the built admin console at `/` and its page paths (history fallback) with the same
 * security headers as the person's console; the end-user server never serves it; the admin API keeps its answers.
 */

const ADMIN_CONSOLE_DIR = resolve('dist/admin-console');
const CONSOLE_DIR = resolve('dist/console');
const UUID = '0b6a2f4e-8d1c-4f3a-9e2b-5c7d8e9f0a1b';
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** The built admin console's index and one script; a missing build fails loudly (npm test builds first). */
function builtAdminConsole(): { index: string; script: string } {
  if (!existsSync(join(ADMIN_CONSOLE_DIR, 'index.html')))
    throw new Error(`the admin console is not built (${ADMIN_CONSOLE_DIR}/index.html is missing): run npm run build`);
  const script = readdirSync(join(ADMIN_CONSOLE_DIR, 'assets')).find((name) => name.endsWith('.js'));
  if (script === undefined) throw new Error(`${ADMIN_CONSOLE_DIR}/assets holds no .js: run npm run build`);
  return { index: readFileSync(join(ADMIN_CONSOLE_DIR, 'index.html'), 'utf8'), script };
}

function expectConsoleHeaders(response: HttpResponse): void {
  const policy = String(response.headers['content-security-policy']);
  expect(policy).toContain("script-src 'self'");
  expect(policy).toContain("style-src 'self'");
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).not.toContain('unsafe-inline');
  expect(policy).not.toContain('unsafe-eval');
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.headers['referrer-policy']).toBe('no-referrer');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['cross-origin-opener-policy']).toBe('same-origin');
}

function expectNotFoundEnvelope(response: HttpResponse): void {
  expect(response.status).toBe(404);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(response.json<object>()).sort()).toEqual(['error', 'message']);
  expect(response.headers['content-security-policy']).toBeUndefined();
}

describe('the admin console served by the admin server', () => {
  let broker: TestBroker;
  let built: ReturnType<typeof builtAdminConsole>;
  let admin: string;
  let enduser: string;

  beforeAll(async () => {
    built = builtAdminConsole();
    broker = await startTestBroker({ servers: [USER_API, ADMIN_API] });
    admin = broker.url('admin');
    enduser = broker.url('enduser');
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers / and every page path with its index.html, no-cache and the console security headers', async () => {
    const paths = [
      '/',
      '/agents',
      '/agents/new',
      `/agents/${UUID}`,
      '/services',
      '/services/new',
      `/services/${UUID}`,
      '/mcp-servers',
      '/mcp-servers/new',
      `/mcp-servers/${UUID}`,
      '/permission-sets',
      '/permission-sets/new',
      `/permission-sets/${UUID}`,
      '/activity',
      '/activity?principal=alice%40example.com',
      '/signing-keys',
    ];
    for (const path of paths) {
      const response = await http(`${admin}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.text).toBe(built.index);
      expectConsoleHeaders(response);
    }
  });

  it('serves its hashed assets immutable with the security headers', async () => {
    const script = await http(`${admin}/assets/${built.script}`);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expectConsoleHeaders(script);
  });

  it('keeps the admin API, health, metrics and documents, and the JSON 404 for unknown API paths', async () => {
    expectNotFoundEnvelope(await http(`${admin}/api/nope`));
    expectNotFoundEnvelope(await http(`${admin}/api/nope`, { headers: BROWSER }));
    const health = await http(`${admin}/health`);
    expect(health.status).toBe(200);
    expect(health.headers['content-security-policy']).toBeUndefined();
    expect((await http(`${admin}/openapi.json`)).headers['content-type']).toMatch(/^application\/json/);
    const agents = await http(`${admin}/api/agents`, { headers: { 'x-remote-user': 'admin@example.com' } });
    expect(agents.status).toBe(200);
    expect(agents.headers['content-type']).toMatch(/^application\/json/);
    // No identity from the proxy: the API's 401, not the page.
    expect((await http(`${admin}/api/agents`)).status).toBe(401);
  });

  it('answers the JSON 404 for paths that only look like pages, and only GET and HEAD at its pages', async () => {
    for (const path of ['/index.html', '/agents/a/b', '/agentsX', '/signing-keys/x', '/overview', '/assets/nope.js'])
      expectNotFoundEnvelope(await http(`${admin}${path}`));
    for (const method of ['POST', 'PUT', 'DELETE']) expectNotFoundEnvelope(await http(`${admin}/agents`, { method }));
  });

  it("answers a browser's unknown path with the console page (status 404 kept), never for the API", async () => {
    const page = await http(`${admin}/settings`, { headers: BROWSER });
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toBe(built.index);
    expectConsoleHeaders(page);
  });

  it('is not served by the end-user server: no page, no asset, and / still goes to the person’s console', async () => {
    for (const path of ['/signing-keys', '/services', '/mcp-servers', '/permission-sets', `/assets/${built.script}`])
      expectNotFoundEnvelope(await http(`${enduser}${path}`));
    const root = await http(`${enduser}/`);
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/agents');
    // The person's console at the one path both consoles have.
    const agents = await http(`${enduser}/agents`);
    expect(agents.text).toBe(readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8'));
    expect(agents.text).not.toBe(built.index);
  });

  it('logs that the admin console is served, and the address to open it at (its public_url)', () => {
    expect(broker.logs.text).toContain('admin console served at / on the admin server');
    expect(broker.logs.text).toContain('admin console at http://localhost:14000/');
  });
});

describe('the admin console switched off', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: [ADMIN_API],
      config: { server: { admin: { console: { enabled: false } } } },
    });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers its paths with the API 404 envelope', async () => {
    for (const path of ['/', '/agents', '/signing-keys'])
      expectNotFoundEnvelope(await http(`${broker.url('admin')}${path}`));
    expect(broker.logs.text).toContain('admin console not served');
    expect(broker.logs.text).not.toContain('admin console at');
  });
});
