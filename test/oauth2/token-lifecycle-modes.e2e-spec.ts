import { ApiClient, http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const UPSTREAM = 'http://127.0.0.1:9';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function config(mode: 'proxy' | 'hybrid'): Record<string, unknown> {
  return {
    oauth2_authorization_server: {
      mode,
      proxy: {
        upstream_issuer_uri: UPSTREAM,
        upstream_authorize_endpoint: `${UPSTREAM}/auth`,
        upstream_token_endpoint: `${UPSTREAM}/token`,
        upstream_jwks_uri: `${UPSTREAM}/jwks`,
        upstream_timeout: '1s',
      },
    },
  };
}

/** An agent with broker-issued credentials (with an upstream client id: a proxied agent). */
async function agentWithSecret(
  broker: TestBroker,
  upstreamClientId?: string,
): Promise<{ id: string; secret: string; basic: string }> {
  const admin = new ApiClient(broker.url('admin'));
  const id = (
    await admin.post('/api/agents', {
      display_name: upstreamClientId ?? 'Local',
      allowed_scopes: ['profile'],
      ...(upstreamClientId === undefined ? {} : { client_id: upstreamClientId }),
    })
  ).json<{ id: string }>().id;
  const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
    .client_secret;
  return { id, secret, basic: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` };
}

const post = (broker: TestBroker, path: string, authorization: string, body: Record<string, string>) =>
  http(`${broker.url('enduser')}${path}`, {
    method: 'POST',
    headers: { ...FORM, authorization },
    body: new URLSearchParams(body).toString(),
  });

/**
 * Revocation and introspection serve the tokens the broker issues itself: none in proxy mode
 * (the upstream issues them; nothing is advertised), and only the local agents' in hybrid mode.
 */
describe('token revocation and introspection in proxy mode', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: config('proxy') });
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it('advertises neither endpoint nor offline_access', async () => {
    const metadata = (await http(`${broker.url('enduser')}/.well-known/oauth-authorization-server`)).json<
      Record<string, unknown>
    >();
    for (const member of [
      'revocation_endpoint',
      'revocation_endpoint_auth_methods_supported',
      'introspection_endpoint',
      'introspection_endpoint_auth_methods_supported',
      'scopes_supported',
    ])
      expect(metadata).not.toHaveProperty(member);
  });

  it('has no clients: every request is 401 invalid_client', async () => {
    const agent = await agentWithSecret(broker, 'agent-at-upstream');
    for (const path of ['/oauth2/revoke', '/oauth2/introspect']) {
      const response = await post(broker, path, agent.basic, { token: 'a.b.c' });
      expect(response.status).toBe(401);
      expect(response.json()).toMatchObject({ error: 'invalid_client' });
    }
  });
});

describe('token revocation and introspection in hybrid mode', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: config('hybrid') });
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it('advertises both endpoints', async () => {
    const metadata = (await http(`${broker.url('enduser')}/.well-known/oauth-authorization-server`)).json<
      Record<string, unknown>
    >();
    const base = String(metadata.token_endpoint).replace(/\/oauth2\/token$/, '');
    expect(metadata).toMatchObject({
      revocation_endpoint: `${base}/oauth2/revoke`,
      introspection_endpoint: `${base}/oauth2/introspect`,
      scopes_supported: ['offline_access'],
    });
  });

  it("serves a local agent, and refuses a proxied agent (its tokens are the upstream's)", async () => {
    const local = await agentWithSecret(broker);
    const proxied = await agentWithSecret(broker, 'agent-at-upstream');
    const issued = await post(broker, '/oauth2/token', local.basic, {
      grant_type: 'client_credentials',
      scope: 'profile',
    });
    expect(issued.status, issued.text).toBe(200);
    const token = issued.json<{ access_token: string }>().access_token;
    expect((await post(broker, '/oauth2/introspect', local.basic, { token })).json()).toMatchObject({
      active: true,
      client_id: local.id,
    });
    for (const path of ['/oauth2/revoke', '/oauth2/introspect'])
      expect((await post(broker, path, proxied.basic, { token })).status).toBe(401);
    expect((await post(broker, '/oauth2/revoke', local.basic, { token })).status).toBe(200);
    expect((await post(broker, '/oauth2/introspect', local.basic, { token })).json()).toEqual({ active: false });
  });
});
