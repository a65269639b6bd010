import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient, freePort, startTestBroker, type HttpsDocumentServer, type TestBroker } from '@broker/testing';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CimdClientProvider,
  connectMcpClient,
  consentingBrowser,
  startClientMetadataDocument,
} from '../support/mcp-client';
import { MCP_SCOPE, startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'http://127.0.0.1:33419/callback';
const CONSENT_UI = 'https://consent.example.com';

/** Waits (real time: the MCP servers check `exp` with their own clock) until `token` has expired. */
async function untilExpired(token: string): Promise<void> {
  const exp = decodeJwt(token).exp as number;
  while (Date.now() / 1000 <= exp + 0.2) await sleep(250);
}

/**
 * MCP clients across an access token's expiry: the broker issues 2-second access tokens, the
 * official MCP SDK client (and examples/mcp/client.mjs) asks for `offline_access` because the
 * broker's metadata lists it, and when the MCP server refuses the expired token the SDK
 * renews it with the refresh token: no second trip through the browser.
 */
describe('MCP clients keep working across an access token expiry (refresh tokens)', () => {
  let docs: HttpsDocumentServer;
  let broker: TestBroker;
  let base: string;
  let clientId: string;
  let mcp: TestMcpServer;
  let exampleUrl: string;
  let exampleAgent: string;
  const clients: Client[] = [];
  const processes: ChildProcess[] = [];

  /** The person's browser: consent for the document client on first use (then the grant covers it), back to the client. */
  let browser: (url: URL) => Promise<URL>;

  beforeAll(async () => {
    ({ docs, clientId } = await startClientMetadataDocument(REDIRECT, ['authorization_code', 'refresh_token']));
    const [port, portMcp, portExample] = [await freePort(), await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    exampleUrl = `http://127.0.0.1:${portExample}/mcp`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
        oauth2_authorization_server: {
          cimd: { enabled: true, allowed_networks: ['127.0.0.1/32'], tls_ca_file: docs.caFile },
          local: {
            token_ttl: '2s',
            resource_indicators: { allowed_resources: [`http://127.0.0.1:${portMcp}/mcp`, exampleUrl] },
          },
        },
      },
    });
    mcp = await startMcpServer({ name: 'MCP', issuer: base, port: portMcp });
    const admin = new ApiClient(broker.url('admin'));
    const alice = new ApiClient(base, ALICE);
    // Both MCP servers registered as protected resources, in one permission set.
    const resourceIds: string[] = [];
    for (const [name, url] of [
      ['MCP', mcp.url],
      ['Example MCP', exampleUrl],
    ] as const) {
      const resource = await admin.post('/api/resources', {
        display_name: name,
        resource_uri: url,
        scopes: [{ scope: MCP_SCOPE, description: `Use the tools of ${name}` }],
      });
      expect(resource.status, resource.text).toBe(201);
      resourceIds.push(resource.json<{ id: string }>().id);
    }
    const setId = (
      await admin.post('/api/permission-sets', {
        name: 'MCP tools',
        resource_scopes: resourceIds.map((id) => ({ resource_id: id, scopes: [MCP_SCOPE] })),
      })
    ).json<{ id: string }>().id;
    expect(
      (
        await admin.post('/api/agents', {
          display_name: 'Desktop MCP client',
          client_uris: [clientId],
          allowed_scopes: [MCP_SCOPE, 'offline_access'],
          permission_sets: [{ permission_set_id: setId }],
        })
      ).status,
    ).toBe(201);
    exampleAgent = (
      await admin.post('/api/agents', {
        display_name: 'Example MCP client',
        redirect_uris: ['http://127.0.0.1:33420/callback'],
        allowed_scopes: [MCP_SCOPE, 'offline_access'],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    expect(
      (
        await alice.post(`/api/consent/agents/${exampleAgent}/grants`, {
          granted_permission_sets: { [setId]: resourceIds },
        })
      ).status,
    ).toBe(201);
    browser = consentingBrowser(alice, base, CONSENT_UI, { [setId]: resourceIds });
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    for (const child of processes) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
    await mcp?.stop();
    await broker?.stop();
    await docs?.stop();
  });

  it('the official SDK client renews an expired access token with its refresh token, without the browser', async () => {
    const provider = new CimdClientProvider(clientId, REDIRECT, browser, base, { offlineAccess: true });
    const client = await connectMcpClient(mcp.url, provider);
    clients.push(client);
    expect(provider.authorizationUrls).toHaveLength(1);
    expect(provider.authorizationUrls[0]?.searchParams.get('scope')).toBe(`${MCP_SCOPE} offline_access`);
    const first = provider.tokens();
    expect(first?.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'before' } })).content).toEqual([
      { type: 'text', text: `MCP: before (for ${ALICE})` },
    ]);

    await untilExpired(first?.access_token as string);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'after' } })).content).toEqual([
      { type: 'text', text: `MCP: after (for ${ALICE})` },
    ]);

    // The MCP server refused the expired token; the SDK refreshed (one rotation) and retried: no second authorization request.
    expect(mcp.refusals).toContain('ERR_JWT_EXPIRED');
    expect(provider.authorizationUrls).toHaveLength(1);
    const second = provider.tokens();
    expect(second?.access_token).not.toBe(first?.access_token);
    expect(second?.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second?.refresh_token).not.toBe(first?.refresh_token);
    expect(decodeJwt(second?.access_token as string)).toMatchObject({
      aud: mcp.url,
      sid: decodeJwt(first?.access_token as string).sid,
      scope: `${MCP_SCOPE} offline_access`,
    });
  });

  it('the official SDK client refreshing twice at once with one refresh token stays signed in (the reuse grace)', async () => {
    const provider = new CimdClientProvider(clientId, REDIRECT, browser, base, { offlineAccess: true });
    const client = await connectMcpClient(mcp.url, provider);
    clients.push(client);
    const first = provider.tokens();
    await untilExpired(first?.access_token as string);
    // Two tool calls at once: both meet a 401 and the SDK refreshes for each with the same refresh token.
    const answers = await Promise.all(
      ['one', 'two'].map((text) => client.callTool({ name: 'echo', arguments: { text } })),
    );
    expect(answers.map((answer) => answer.content)).toEqual([
      [{ type: 'text', text: `MCP: one (for ${ALICE})` }],
      [{ type: 'text', text: `MCP: two (for ${ALICE})` }],
    ]);
    expect(provider.authorizationUrls).toHaveLength(1);
    const sid = decodeJwt(first?.access_token as string).sid as string;
    const rotations = await broker.broker.runtime.database.dataSource.query<{ n: number; revoked: number }[]>(
      'SELECT count(*)::int AS n, count(revoked_at)::int AS revoked FROM refresh_tokens WHERE family_id = $1',
      [sid],
    );
    // One successor, whichever of the two refreshes stored it; the family did not branch and is not ended.
    expect(rotations[0]).toEqual({ n: 2, revoked: 0 });
    await untilExpired(provider.tokens()?.access_token as string);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'later' } })).content).toEqual([
      { type: 'text', text: `MCP: later (for ${ALICE})` },
    ]);
    expect(provider.authorizationUrls).toHaveLength(1);
  });

  it('examples/mcp/client.mjs keeps calling whoami across an expiry, renewing its token without the browser', async () => {
    const port = new URL(exampleUrl).port;
    const server = spawn(
      process.execPath,
      ['examples/mcp/server.mjs', '--port', port, '--broker', base, '--url', exampleUrl],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    processes.push(server);
    await new Promise<void>((resolve, reject) => {
      let output = '';
      server.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('MCP server on')) resolve();
      });
      server.on('exit', (code) => reject(new Error(`server.mjs exited ${String(code)}: ${output}`)));
    });

    const client = spawn(
      process.execPath,
      [
        'examples/mcp/client.mjs',
        '--client-id',
        exampleAgent,
        '--server',
        exampleUrl,
        '--callback-port',
        '33420',
        '--calls',
        '2',
        '--interval',
        '3',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    processes.push(client);
    let output = '';
    client.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const authorizationUrl = await new Promise<URL>((resolve, reject) => {
      client.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const line = /^\s+(http\S+\/oauth2\/authorize\S+)$/m.exec(output);
        if (line?.[1] !== undefined) resolve(new URL(line[1]));
      });
      client.on('exit', (code) => reject(new Error(`client.mjs exited ${String(code)}: ${output}`)));
    });
    expect(authorizationUrl.searchParams.get('scope')).toBe(`${MCP_SCOPE} offline_access`);
    // The person's browser: the broker redirects to the client's loopback callback, which the browser then loads.
    const callback = await browser(authorizationUrl);
    expect((await fetch(callback)).status).toBe(200);
    const [code] = (await once(client, 'exit')) as [number | null];
    expect(code, output).toBe(0);
    expect(output.match(/^You are alice@example\.com via agent /gm)).toHaveLength(2);
    expect(output).toContain('access token renewed with the refresh token (no browser)');
    expect(output.match(/Open this URL in a browser/g)).toHaveLength(1);
  });
});
