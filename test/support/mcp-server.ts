import { createServer, type Server } from 'node:http';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import express from 'express';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { z } from 'zod';

/** The scope an MCP server of these tests requires (and advertises in its protected-resource metadata). */
export const MCP_SCOPE = 'mcp:tools';

export interface TestMcpServer {
  /** The MCP endpoint, which is also the resource indicator (RFC 8707) and the `aud` the server accepts. */
  readonly url: string;
  /** Tokens this server refused, with the reason (for assertions). */
  readonly refusals: string[];
  stop(): Promise<void>;
}

/**
 * A JWT access-token verifier as the MCP authorization specification asks of an MCP server
 * (RFC 9068): the broker's signature (its JWKS, fetched once and cached by jose), `iss` the
 * broker, `typ` `at+jwt`, not expired, and `aud` naming this server. Any failure is an
 * `invalid_token` (401).
 */
export function brokerTokenVerifier(
  issuer: string,
  jwksUri: string,
  resource: string,
  refusals: string[] = [],
): OAuthTokenVerifier {
  const keys = createRemoteJWKSet(new URL(jwksUri));
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer,
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
          extra: { sub: payload.sub },
        };
      } catch (error) {
        const reason = error instanceof errors.JOSEError ? error.code : 'ERR_UNKNOWN';
        refusals.push(reason);
        throw new InvalidTokenError(`the access token is not valid here (${reason})`);
      }
    },
  };
}

/**
 * An MCP server built with the official SDK (McpServer, stateless Streamable HTTP) on
 * loopback at `http://127.0.0.1:<port>/mcp`, protected by the broker: its RFC 9728
 * metadata names the broker as authorization server, and `requireBearerAuth` runs
 * `brokerTokenVerifier` and requires `MCP_SCOPE`. One tool, `echo`, answers with the text
 * and the token's subject.
 */
export async function startMcpServer(options: { name: string; issuer: string; port: number }): Promise<TestMcpServer> {
  const url = `http://127.0.0.1:${options.port}/mcp`;
  const metadata = (await (
    await fetch(`${options.issuer}/.well-known/oauth-authorization-server`)
  ).json()) as OAuthMetadata & { jwks_uri: string };
  const refusals: string[] = [];
  const app = express();
  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata: metadata,
      resourceServerUrl: new URL(url),
      scopesSupported: [MCP_SCOPE],
      resourceName: options.name,
    }),
  );
  const bearer = requireBearerAuth({
    verifier: brokerTokenVerifier(metadata.issuer, metadata.jwks_uri, url, refusals),
    requiredScopes: [MCP_SCOPE],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(url)),
  });
  app.post('/mcp', express.json(), bearer, async (request, response) => {
    const server = new McpServer({ name: options.name, version: '1.0.0' });
    server.registerTool(
      'echo',
      { description: 'Echoes the text, with the caller', inputSchema: { text: z.string() } },
      ({ text }, extra) => ({
        content: [{ type: 'text', text: `${options.name}: ${text} (for ${String(extra.authInfo?.extra?.sub)})` }],
      }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  app.all('/mcp', bearer, (_request, response) => {
    response.status(405).set('allow', 'POST').json({ error: 'method_not_allowed' });
  });
  const http: Server = createServer(app);
  await new Promise<void>((resolve) => http.listen(options.port, '127.0.0.1', resolve));
  return {
    url,
    refusals,
    stop: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
