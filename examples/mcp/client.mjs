#!/usr/bin/env node
// A minimal MCP client (the official SDK), to try examples/mcp/server.mjs without an IDE:
//
//   node examples/mcp/client.mjs --client-id <agent id or client metadata document URL> [--server http://localhost:3001/mcp]
//                                [--calls 3 --interval 90]
//
// It runs the MCP authorization flow like desktop MCP clients do: discovery from the MCP
// server's protected-resource metadata, the authorization request with PKCE and
// resource=<MCP server> (it prints the URL: open it in a browser, consent, and the browser
// comes back to http://127.0.0.1:33418/callback, where this script listens), the token
// request with the same resource, then it lists the tools and calls `whoami` (`--calls` times,
// `--interval` seconds apart). When the broker's metadata lists `offline_access` in
// scopes_supported, it asks for it too (MCP authorization, 2026-07-28 revision): when the
// access token expires between calls, the SDK renews it with the refresh token (rotated on
// every use) instead of sending you to the browser again, and this script says so.
// Tokens are kept in memory only and never printed.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const { values } = parseArgs({
  options: {
    'client-id': { type: 'string' },
    server: { type: 'string', default: process.env.MCP_SERVER_URL ?? 'http://localhost:3001/mcp' },
    'callback-port': { type: 'string', default: '33418' },
    calls: { type: 'string', default: '1' },
    interval: { type: 'string', default: '90' },
  },
});
if (!values['client-id']) {
  console.error(
    'usage: node examples/mcp/client.mjs --client-id <agent id or https client metadata document URL> [--server http://localhost:3001/mcp]',
  );
  process.exit(2);
}
const clientId = values['client-id'];
const redirectUrl = `http://127.0.0.1:${values['callback-port']}/callback`;

// The browser comes back here with ?code=…&state=…&iss=… (or ?error=…).
let arrived;
const callback = new Promise((resolve) => (arrived = resolve));
const listener = createServer((request, response) => {
  const url = new URL(request.url ?? '/', redirectUrl);
  if (url.pathname !== '/callback') return void response.writeHead(404).end();
  response
    .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    .end('Authorization received: you can close this tab.');
  arrived(url.searchParams);
});
await new Promise((resolve) => listener.listen(Number(values['callback-port']), '127.0.0.1', resolve));

let state = '';
let verifier = '';
let information = clientId.startsWith('https://') ? undefined : { client_id: clientId };
let tokens;
let discovery;
/** In-memory OAuthClientProvider: a URL client id is used as a CIMD client_id, anything else as a pre-registered one. */
const provider = {
  redirectUrl,
  clientMetadataUrl: clientId.startsWith('https://') ? clientId : undefined,
  clientMetadata: {
    client_name: 'Broker example MCP client',
    redirect_uris: [redirectUrl],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
  },
  state: () => (state = randomBytes(16).toString('base64url')),
  clientInformation: () => information,
  saveClientInformation: (value) => void (information = value),
  tokens: () => tokens,
  saveTokens: (value) => {
    // A second save is a renewal: the access token expired and the refresh token bought a new one.
    if (tokens !== undefined)
      console.log(`access token renewed with the refresh token (no browser), valid ${value.expires_in ?? '?'} s`);
    tokens = value;
  },
  saveCodeVerifier: (value) => void (verifier = value),
  codeVerifier: () => verifier,
  saveDiscoveryState: (value) => void (discovery = value),
  discoveryState: () => discovery,
  redirectToAuthorization: (url) => {
    const scope = url.searchParams.get('scope') ?? '';
    if (
      discovery?.authorizationServerMetadata?.scopes_supported?.includes('offline_access') &&
      !scope.split(' ').includes('offline_access')
    ) {
      url.searchParams.set('scope', [scope, 'offline_access'].filter(Boolean).join(' '));
    }
    console.log(`\nOpen this URL in a browser and allow the request:\n\n  ${url.href}\n`);
  },
};

let client = new Client({ name: 'broker-example-client', version: '1.0.0' });
const first = new StreamableHTTPClientTransport(new URL(values.server), { authProvider: provider });
try {
  await client.connect(first);
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const params = await callback;
  if (params.get('error'))
    throw new Error(`authorization refused: ${params.get('error')} ${params.get('error_description') ?? ''}`);
  if (params.get('state') !== state) throw new Error('state mismatch: not the answer to this request');
  await first.finishAuth(params.get('code'));
  client = new Client({ name: 'broker-example-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(values.server), { authProvider: provider }));
}
listener.close();
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
const calls = Number(values.calls);
for (let call = 1; call <= calls; call += 1) {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  for (const part of result.content) if (part.type === 'text') console.log(part.text);
  if (call < calls) await new Promise((resolve) => setTimeout(resolve, Number(values.interval) * 1000));
}
await client.close();
