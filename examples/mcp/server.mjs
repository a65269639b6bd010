#!/usr/bin/env node
// A small MCP server protected by the broker. Run from the repository root:
//
//   node examples/mcp/server.mjs [--port 3001] [--broker http://localhost:8000] [--url http://localhost:3001/mcp]
//
// (or PORT, BROKER_URL, MCP_SERVER_URL). It serves one tool, `whoami`, over Streamable HTTP at
// /mcp, publishes RFC 9728 protected-resource metadata naming the broker as its authorization
// server, and accepts only broker access tokens meant for it: signed with a key of the broker's
// JWKS, `iss` the broker, `typ` at+jwt, not expired, scope `mcp:tools`, `aud` this server's URL.
// See README.md next to this file.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

const SCOPE = 'mcp:tools';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PORT ?? '3001' },
    broker: { type: 'string', default: process.env.BROKER_URL ?? 'http://localhost:8000' },
    url: { type: 'string', default: process.env.MCP_SERVER_URL },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(
    'usage: node examples/mcp/server.mjs [--port 3001] [--broker http://localhost:8000] [--url <public URL of /mcp>]',
  );
  process.exit(0);
}
const port = Number(values.port);
const broker = values.broker.replace(/\/+$/, '');
// This server's URL is its resource indicator: clients ask the broker for a token with
// resource=<this URL>, and the token's aud must be exactly it.
const resource = values.url ?? `http://localhost:${port}/mcp`;

// The broker's RFC 8414 metadata, read once at start-up: issuer and JWKS location.
const response = await fetch(`${broker}/.well-known/oauth-authorization-server`).catch((error) => {
  console.error(
    `cannot reach the broker at ${broker} (${error.cause?.code ?? error.message}); start it first (npm start)`,
  );
  process.exit(1);
});
if (!response.ok) {
  console.error(`${broker}/.well-known/oauth-authorization-server answered ${response.status}`);
  process.exit(1);
}
const metadata = await response.json();
if (metadata.client_id_metadata_document_supported !== true) {
  console.warn(
    'warning: the broker does not advertise client_id_metadata_document_supported; enable oauth2_authorization_server.cimd (see examples/mcp/broker.yaml) or MCP clients cannot identify themselves',
  );
}
// jose fetches the key set once and again only for an unknown kid (rotation), not per request.
const keys = createRemoteJWKSet(new URL(metadata.jwks_uri));

/** RFC 9068 / MCP authorization: the checks a resource server makes on a broker access token. */
const verifier = {
  async verifyAccessToken(token) {
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: metadata.issuer,
        audience: resource,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'sub'],
      });
      return {
        token,
        clientId: typeof payload.client_id === 'string' ? payload.client_id : '',
        scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
        expiresAt: payload.exp,
        resource: new URL(resource),
        extra: { sub: payload.sub, agent_id: payload.agent_id },
      };
    } catch (error) {
      // The reason (wrong audience, expired, bad signature…) goes to this log, never the token.
      console.warn(
        `refused a token: ${error instanceof errors.JOSEError ? `${error.code} ${error.message}` : 'not a JWT'}`,
      );
      throw new InvalidTokenError('the access token is not valid for this MCP server');
    }
  },
};

const app = express();
// GET /.well-known/oauth-protected-resource/mcp: { resource, authorization_servers: [broker], scopes_supported }.
app.use(
  mcpAuthMetadataRouter({
    oauthMetadata: metadata,
    resourceServerUrl: new URL(resource),
    scopesSupported: [SCOPE],
    resourceName: 'Broker example MCP server',
  }),
);
const bearer = requireBearerAuth({
  verifier,
  requiredScopes: [SCOPE],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(resource)),
});

// Stateless Streamable HTTP: a fresh server and transport per request.
app.post('/mcp', express.json(), bearer, async (request, response) => {
  const server = new McpServer({ name: 'broker-example', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'Says who the broker says is calling, through which agent, and when' },
    (extra) => ({
      content: [
        {
          type: 'text',
          text: `You are ${extra.authInfo?.extra?.sub} via agent ${extra.authInfo?.extra?.agent_id}; it is ${new Date().toISOString()}.`,
        },
      ],
    }),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, request.body);
});
app.all('/mcp', bearer, (_request, response) => {
  response.status(405).set('allow', 'POST').json({ error: 'method_not_allowed' });
});

const listener = createServer(app);
listener.listen(port, '127.0.0.1', () => {
  console.log(`MCP server on ${resource} (listening on 127.0.0.1:${port}); authorization server ${metadata.issuer}`);
  console.log(`protected-resource metadata: ${getOAuthProtectedResourceMetadataUrl(new URL(resource))}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    listener.closeAllConnections();
    listener.close(() => process.exit(0));
  });
}
