import {
  ApiClient,
  freePort,
  startHttpsDocumentServer,
  startTestBroker,
  type HttpsDocumentServer,
  type TestBroker,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentingBrowser } from '../support/mcp-client';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'http://127.0.0.1:33421/callback';
const CONSENT_UI = 'https://consent.example.com';
const insecure = { [oauth.allowInsecureRequests]: true };

/**
 * Revocation by a Client ID Metadata Document client (docs/oauth2.md "Token lifecycle"): it
 * authenticates by its document URL alone, as at the token endpoint, and revokes the
 * refresh tokens issued to that URL (with the access tokens of their families); the agent's
 * own client id, or another document URL of the same agent, revokes none of them.
 */
describe('token revocation by a metadata-document client', () => {
  let docs: HttpsDocumentServer;
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let clientId: string;
  let sibling: string;
  let agent: { id: string; secret: string };
  let tokens: oauth.TokenEndpointResponse;

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
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
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

    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'tools offline_access',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const callback = await consentingBrowser(alice, base, CONSENT_UI, { [setId]: [serviceId] })(url);
    const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const params = oauth.validateAuthResponse(as, client, callback, oauth.expectNoState);
    tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    expect(tokens.refresh_token).toBeDefined();
  });

  afterAll(async () => {
    await broker?.stop();
    await docs?.stop();
  });

  const active = async (token: string): Promise<boolean> => {
    const client: oauth.Client = { client_id: agent.id };
    return (
      await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(agent.secret), token, insecure),
      )
    ).active;
  };
  const revoke = async (client: string, auth: oauth.ClientAuth, token: string): Promise<void> => {
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, { client_id: client }, auth, token, insecure),
    );
  };

  it("is not done by the agent's own client id, nor by another document URL of the agent", async () => {
    await revoke(agent.id, oauth.ClientSecretBasic(agent.secret), tokens.refresh_token as string);
    await revoke(agent.id, oauth.ClientSecretBasic(agent.secret), tokens.access_token);
    await revoke(sibling, oauth.None(), tokens.refresh_token as string);
    await revoke(sibling, oauth.None(), tokens.access_token);
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
