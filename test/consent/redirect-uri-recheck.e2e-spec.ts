import { AuthorizationSessionTokens } from '@broker/oauth-server';
import { ApiClient, freePort, http, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const REDIRECT = 'https://agent.example.com/cb';
const JAVASCRIPT = 'javascript:alert(document.domain)//x';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/**
 * An agent stored before the redirect URI rule (or written to the database
 * directly) with a `javascript:` or `data:` redirect URI is never redirected to: authorize
 * answers JSON `invalid_redirect_uri`, the consent deny refuses, whatever else the request says.
 */
describe.each(testBackends())('redirect URIs checked again before every redirect on $name', (backend) => {
  let broker: TestBroker;
  let base: string;
  let agentId: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const serviceId = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://mail.example.com'],
      })
    ).json<{ id: string }>().id;
    const setId = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    agentId = (
      await admin.post('/api/agents', {
        display_name: 'Legacy',
        redirect_uris: [REDIRECT],
        allowed_scopes: ['mail.read'],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    expect(
      (
        await new ApiClient(base, 'alice@example.com').post(`/api/consent/agents/${agentId}/grants`, {
          granted_permission_sets: { [setId]: [serviceId] },
        })
      ).status,
    ).toBe(201);
    // The admin API refuses these now; a row from before the rule (or written by hand) still has them.
    await broker.broker.runtime.database.dataSource.query('UPDATE agents SET redirect_uris = $1::jsonb WHERE id = $2', [
      JSON.stringify([REDIRECT, JAVASCRIPT, 'data:text/html,<script>alert(1)</script>', 'http://agent.example.com/cb']),
      agentId,
    ]);
  });

  afterAll(async () => {
    await broker.stop();
  });

  function authorize(principal: string, params: Record<string, string>) {
    const url = new URL(`${base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: agentId,
      response_type: 'code',
      state: 's1',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      ...params,
    }))
      url.searchParams.set(k, v);
    return http(url.toString(), { headers: { 'x-remote-user': principal } });
  }

  it('answers authorize with JSON invalid_redirect_uri for a stored javascript:, data: or off-loopback http redirect URI, never a Location', async () => {
    for (const redirectUri of [JAVASCRIPT, 'data:text/html,<script>alert(1)</script>', 'http://agent.example.com/cb']) {
      // With a grant (a code would be issued), without one (the consent page), and with a scope that would be redirected as invalid_scope.
      for (const [principal, extra] of [
        ['alice@example.com', {}],
        ['bob@example.com', {}],
        ['alice@example.com', { scope: 'admin' }],
      ] as const) {
        const response = await authorize(principal, { redirect_uri: redirectUri, ...extra });
        expect(response.status, `${redirectUri} ${principal}`).toBe(400);
        expect(response.headers.location).toBeUndefined();
        expect(response.json()).toEqual({
          error: 'invalid_redirect_uri',
          error_description: 'redirect_uri must be https, http on loopback or a private-use scheme',
        });
      }
    }
    // The agent's https redirect URI still works.
    const good = await authorize('alice@example.com', { redirect_uri: REDIRECT });
    expect(good.status).toBe(302);
    expect(good.headers.location).toMatch(/^https:\/\/agent\.example\.com\/cb\?code=/);
  });

  it('refuses to hand the consent page a javascript: redirect_url when the user declines a session issued before the rule', async () => {
    const sessions = broker.broker.server('enduser').app.get(AuthorizationSessionTokens);
    const original = new URL(`${base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: agentId,
      response_type: 'code',
      redirect_uri: JAVASCRIPT,
      state: 's1',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }))
      original.searchParams.set(k, v);
    const token = await sessions.issue({
      agentId,
      principal: 'carol@example.com',
      originalUrl: original.toString(),
      cimd: null,
    });
    const denied = await new ApiClient(base, 'carol@example.com').post(
      `/api/consent/agents/${agentId}/deny?session_token=${encodeURIComponent(token)}`,
    );
    expect(denied.status).toBe(400);
    expect(denied.json()).toEqual({
      error: 'invalid_redirect_uri',
      message: 'redirect_uri must be https, http on loopback or a private-use scheme',
    });
    expect(denied.text).not.toContain('javascript:');
  });

  it('refuses a CIMD session whose signed redirect_uri is javascript: (declined consent)', async () => {
    const sessions = broker.broker.server('enduser').app.get(AuthorizationSessionTokens);
    const clientIdUrl = 'https://agent.example.com/client.json';
    const original = new URL(`${base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: clientIdUrl,
      response_type: 'code',
      redirect_uri: JAVASCRIPT,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }))
      original.searchParams.set(k, v);
    const cimd = {
      client_id_url: clientIdUrl,
      redirect_uri: JAVASCRIPT,
      verified_domain: 'agent.example.com',
      requested_scopes: [],
      logo_uri: null,
    };
    const token = await sessions.issue({
      agentId,
      principal: 'dave@example.com',
      originalUrl: original.toString(),
      cimd,
    });
    const denied = await new ApiClient(base, 'dave@example.com').post(
      `/api/consent/agents/${agentId}/deny?session_token=${encodeURIComponent(token)}`,
    );
    expect(denied.status).toBe(400);
    expect(denied.json<{ error: string }>().error).toBe('invalid_redirect_uri');
  });
});
