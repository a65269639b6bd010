import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  ApiClient,
  freePort,
  launchBrowser,
  openConsolePage,
  startTestBroker,
  type RecordedPage,
  type TestBroker,
} from '@broker/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewPage } from '../support/console-fixture';
import { MCP_SCOPE } from '../support/mcp-server';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
/** The runner (pinned in package.json) and the hook giving it `fs.globSync` on Node 20. */
const RUNNER = resolve('node_modules/@modelcontextprotocol/conformance/dist/index.js');
const GLOB_SYNC = resolve('test/support/conformance/glob-sync.mjs');

interface Check {
  readonly id: string;
  readonly status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  readonly errorMessage?: string;
}

/** Every check the runner wrote (one checks.json per scenario under `dir`). */
function checksIn(dir: string): Check[] {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('checks.json'));
  return files.flatMap((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Check[]);
}

/**
 * The MCP project's conformance runner, `authorization` mode: it plays an MCP client against the
 * broker as the authorization server of a registered protected resource (an MCP server). It
 * checks the server metadata (RFC 8414, with Client ID Metadata Documents supported), then prints
 * an authorization URL for a person to open; here Chromium opens it, the broker's consent page
 * names the MCP server, the person allows, and the runner redeems the code on its loopback
 * callback and checks the token response.
 */
describe('MCP conformance runner: authorization scenarios against the local authorization server', () => {
  let broker: TestBroker;
  let browser: Browser;
  let base: string;
  let resource: string;
  let agent: string;
  let callbackPort: number;
  let page: RecordedPage | undefined;
  let runner: ChildProcess | undefined;
  const output = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));

  beforeAll(async () => {
    browser = await launchBrowser();
    const port = await freePort();
    callbackPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    resource = `http://127.0.0.1:${await freePort()}/mcp`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: base } },
        oauth2_authorization_server: { cimd: { enabled: true } },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const created = async (path: string, body: unknown): Promise<string> => {
      const response = await admin.post(path, body);
      expect(response.status, response.text).toBe(201);
      return response.json<{ id: string }>().id;
    };
    const resourceId = await created('/api/resources', {
      display_name: 'Conformance MCP server',
      description: 'The MCP server the runner asks a token for.',
      resource_uri: resource,
      scopes: [{ scope: MCP_SCOPE, description: 'Use its tools' }],
    });
    const setId = await created('/api/permission-sets', {
      name: 'MCP tools',
      resource_scopes: [{ resource_id: resourceId, scopes: [MCP_SCOPE] }],
    });
    // A public client (PKCE, no secret): the runner authenticates with `none` whenever the server offers it.
    agent = await created('/api/agents', {
      display_name: 'Conformance runner',
      redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
      allowed_scopes: [MCP_SCOPE],
      permission_sets: [{ permission_set_id: setId }],
    });
  });

  afterAll(async () => {
    if (runner !== undefined && runner.exitCode === null && runner.signalCode === null) {
      runner.kill('SIGTERM');
      await once(runner, 'exit');
    }
    await page?.close();
    await browser?.close().catch(() => undefined);
    await broker?.stop();
    rmSync(output, { recursive: true, force: true });
  });

  it('passes the metadata and authorization-code scenarios, the person consenting to the MCP server by name in Chromium', async () => {
    const args = [
      '--import',
      GLOB_SYNC,
      RUNNER,
      'authorization',
      '--url',
      base,
      '--client-id',
      agent,
      '--resource',
      resource,
      '--port',
      String(callbackPort),
      '--output-dir',
      output,
      '--spec-version',
      '2025-11-25',
    ];
    const child = spawn(process.execPath, args, { cwd: output, stdio: ['ignore', 'pipe', 'pipe'] });
    runner = child;
    let printed = '';
    child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    // The runner prints the authorization URL for a person to open, then waits for its callback.
    const authorizationUrl = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
        const found = printed.match(new RegExp(`^${base.replace(/[.:/]/g, '\\$&')}/oauth2/authorize\\?\\S+$`, 'm'));
        if (found !== null) done(found[0]);
      });
      child.on('exit', (code) =>
        fail(new Error(`the runner exited (${String(code)}) before asking for consent:\n${printed}`)),
      );
    });
    expect(new URL(authorizationUrl).searchParams.get('resource')).toBe(resource);

    page = await openConsolePage(browser, { broker: base, principal: ALICE });
    const p = page.page;
    const called = p.waitForRequest(
      (request) => request.url().startsWith(`http://127.0.0.1:${callbackPort}/callback?`),
      { timeout: 15_000 },
    );
    await p.goto(authorizationUrl);
    await p.waitForURL((url) => url.pathname === `/agents/${agent}`);
    // The consent page names the MCP server and its permission in words; nothing to connect for it.
    await p.getByText('Conformance MCP server').first().waitFor();
    await p.getByText(resource).first().waitFor();
    await p.getByText('Use its tools').first().waitFor();
    expect(await p.getByRole('button', { name: /connect/i }).count()).toBe(0);
    await reviewPage(page, 'conformance-consent');
    await p.getByRole('button', { name: /^allow/i }).click();
    const callback = new URL((await called).url());
    const authorizationCode = callback.searchParams.get('code') as string;
    expect(authorizationCode).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const [code] = (await once(child, 'exit')) as [number | null];
    const checks = checksIn(output);
    expect(
      checks.map((check) => [check.id, check.status]).sort(([a], [b]) => String(a).localeCompare(String(b))),
      JSON.stringify(checks.filter((check) => check.status !== 'SUCCESS')),
    ).toEqual([
      ['authorization-code-grant', 'SUCCESS'],
      ['authorization-server-metadata', 'SUCCESS'],
      ['authorization-server-metadata-cimd', 'SUCCESS'],
    ]);
    expect(code, printed).toBe(0);
    // The code never appears in the broker's log lines.
    expect(broker.logs.leaked([authorizationCode])).toEqual([]);
    expect(page.pageErrors).toEqual([]);
  });
});
