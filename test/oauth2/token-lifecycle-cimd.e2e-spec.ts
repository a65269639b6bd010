import {
  ApiClient,
  freePort,
  startHttpsDocumentServer,
  startJwtIssuer,
  startTestBroker,
  testBackends,
  type HttpsDocumentServer,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentingBrowser } from '../support/mcp-client';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'http://127.0.0.1:33421/callback';
const CONSENT_UI = 'https://consent.example.com';
const insecure = { [oauth.allowInsecureRequests]: true };
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * Revocation and introspection of a Client ID Metadata Document client's tokens
 * (docs/oauth2.md "Token lifecycle"), on both database backends: the client authenticates by
 * its document URL alone, as at the token endpoint, and revokes the tokens issued to that URL
 * (a refresh token with its family's access tokens; an access token with or without a family);
 * the agent's own client id neither introspects nor revokes any of them, nor does another
 * document URL of the same agent revoke them. The gateway sees every token.
 */
describe.each(testBackends())('tokens of a metadata-document client on $name', (backend) => {
  let docs: HttpsDocumentServer;
  let gateway: TestJwtIssuer;
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let clientId: string;
  let sibling: string;
  let agent: { id: string; secret: string };
  let tokens: oauth.TokenEndpointResponse;
  /** An access token of the document client without a refresh token (no `offline_access`). */
  let once: oauth.TokenEndpointResponse;

  beforeAll(async () => {
    docs = await startHttpsDocumentServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: `https://127.0.0.1:${docs.port}${request.url ?? ''}`,
          client_name: 'Desktop MCP client',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        }),
      );
    });
    clientId = `https://127.0.0.1:${docs.port}/oauth/client-metadata.json`;
    sibling = `https://127.0.0.1:${docs.port}/oauth/other-client.json`;
    gateway = await startJwtIssuer('ES256');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
        token_exchange: { client_assertion: { issuer_uri: gateway.issuer, jwks_uri: gateway.jwksUri } },
        oauth2_authorization_server: {
          cimd: { enabled: true, allowed_networks: ['127.0.0.1/32'], tls_ca_file: docs.caFile },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const alice = new ApiClient(base, ALICE);
    const serviceId = (
      await admin.post('/api/services', {
        display_name: 'Tools',
        client_id: 'tools',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://tools.example.com'],
      })
    ).json<{ id: string }>().id;
    const setId = (
      await admin.post('/api/permission-sets', {
        name: 'Tools',
        service_scopes: [{ service_id: serviceId, scopes: ['tools'] }],
      })
    ).json<{ id: string }>().id;
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Desktop MCP client',
        client_uris: [clientId, sibling],
        allowed_scopes: ['tools', 'offline_access'],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    agent = {
      id,
      secret: (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    as = await oauth.processDiscoveryResponse(
      new URL(base),
      await oauth.discoveryRequest(new URL(base), { algorithm: 'oauth2', ...insecure }),
    );

    const browser = consentingBrowser(alice, base, CONSENT_UI, { [setId]: [serviceId] });
    const authorize = async (scope: string): Promise<oauth.TokenEndpointResponse> => {
      const verifier = oauth.generateRandomCodeVerifier();
      const url = new URL(as.authorization_endpoint as string);
      for (const [k, v] of Object.entries({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
      const params = oauth.validateAuthResponse(as, client, await browser(url), oauth.expectNoState);
      return oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
      );
    };
    tokens = await authorize('tools offline_access');
    once = await authorize('tools');
    expect(once.refresh_token).toBeUndefined();
    expect(tokens.refresh_token).toBeDefined();
  });

  afterAll(async () => {
    await broker?.stop();
    await docs?.stop();
    await gateway?.stop();
  });

  const introspect = async (client: string, auth: oauth.ClientAuth, token: string) =>
    oauth.processIntrospectionResponse(
      as,
      { client_id: client },
      await oauth.introspectionRequest(as, { client_id: client }, auth, token, insecure),
    );
  /** The gateway's client authentication: its client assertion (RFC 7523) in the form. */
  const gatewayAuth: oauth.ClientAuth = async (_as, _client, body) => {
    body.set('client_assertion_type', JWT_BEARER);
    body.set('client_assertion', await gateway.sign({ sub: 'gateway' }, { audience: base }));
  };
  /** Whether the token is active, as the gateway (which sees every token) is told. */
  const active = async (token: string): Promise<boolean> => (await introspect('gateway', gatewayAuth, token)).active;
  const asAgent = (token: string) => introspect(agent.id, oauth.ClientSecretBasic(agent.secret), token);
  const revoke = async (client: string, auth: oauth.ClientAuth, token: string): Promise<void> => {
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, { client_id: client }, auth, token, insecure),
    );
  };

  it('names the document URL in the access token it issues to the client, with or without a refresh token', () => {
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: agent.id, client_id_url: clientId });
    expect(decodeJwt(once.access_token)).toMatchObject({ client_id: agent.id, client_id_url: clientId });
    expect(decodeJwt(once.access_token).sid).toBeUndefined();
  });

  it("answers the agent's own client id inactive for the document client's tokens, which the gateway sees active", async () => {
    for (const token of [tokens.access_token, once.access_token, tokens.refresh_token as string])
      expect(await asAgent(token)).toEqual({ active: false });
    expect(await active(tokens.access_token)).toBe(true);
    expect(await active(once.access_token)).toBe(true);
  });

  it("is not done by the agent's own client id, nor by another document URL of the agent", async () => {
    for (const token of [tokens.refresh_token as string, tokens.access_token, once.access_token]) {
      await revoke(agent.id, oauth.ClientSecretBasic(agent.secret), token);
      await revoke(sibling, oauth.None(), token);
    }
    expect(await active(tokens.access_token)).toBe(true);
    expect(await active(once.access_token)).toBe(true);
  });

  it("is done by the document client for its access token without a family, never for the agent's own", async () => {
    const own = await oauth.processClientCredentialsResponse(
      as,
      { client_id: agent.id },
      await oauth.clientCredentialsGrantRequest(
        as,
        { client_id: agent.id },
        oauth.ClientSecretBasic(agent.secret),
        new URLSearchParams(),
        insecure,
      ),
    );
    await revoke(clientId, oauth.None(), own.access_token);
    expect(await asAgent(own.access_token)).toMatchObject({ active: true, client_id: agent.id });
    await revoke(clientId, oauth.None(), once.access_token);
    expect(await active(once.access_token)).toBe(false);
    expect(await active(tokens.access_token)).toBe(true);
  });

  it('is done by the document client for its refresh token: the family and its access tokens end', async () => {
    await revoke(clientId, oauth.None(), tokens.refresh_token as string);
    expect(await active(tokens.access_token)).toBe(false);
    const reuse = await oauth.refreshTokenGrantRequest(
      as,
      { client_id: clientId, token_endpoint_auth_method: 'none' },
      oauth.None(),
      tokens.refresh_token as string,
      insecure,
    );
    expect(reuse.status).toBe(400);
  });
});
