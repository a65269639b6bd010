#!/usr/bin/env node
// A sample third-party service for examples/mcp/gateway.mjs on your own machine: "Profiles", an OAuth 2.0 / OpenID
// provider (panva's oidc-provider, in its development setup: any name and password sign in) whose userinfo endpoint
// (/me) is the API the gateway's `profile` tool reads. One client, the broker:
//
//   node examples/mcp/provider.mjs --redirect-uri http://localhost:8000/api/third-party/<service id>/oauth2/callback
//        [--port 9100] [--client-id agent-identity-broker] [--client-secret <secret>]
//
// Development only: keys, sessions and grants live in memory and are gone when it stops.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9100' },
    'redirect-uri': { type: 'string' },
    'client-id': { type: 'string', default: 'agent-identity-broker' },
    'client-secret': { type: 'string', default: 'profiles-example-secret' },
  },
});
if (!values['redirect-uri']) {
  console.error('usage: node examples/mcp/provider.mjs --redirect-uri <the broker callback URL of the service>');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${values.port}`;
// Its quick-start warnings (in-memory adapter, development keys and login pages) are what an example wants.
const warn = console.warn;
console.warn = (...parts) => (String(parts[0]).includes('oidc-provider WARNING') ? undefined : warn(...parts));
const { default: Provider } = await import('oidc-provider');
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: values['client-id'],
      client_secret: values['client-secret'],
      redirect_uris: [values['redirect-uri']],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['openid', 'offline_access', 'profile'],
  claims: { openid: ['sub'], profile: ['name'] },
  pkce: { required: () => true },
  issueRefreshToken: () => true,
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, name: id }) }),
});
const server = createServer(provider.callback());
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(
    `Profiles (sample provider) on ${issuer}: authorize ${issuer}/auth, token ${issuer}/token, API ${issuer}/me`,
  );
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
