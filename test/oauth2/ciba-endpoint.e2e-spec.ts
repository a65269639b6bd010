import { ApiClient, freePort, http, startTestBroker, testBackends, type HttpResponse } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CIBA_GRANT,
  JWT_BEARER,
  startCibaFixture,
  toolCall,
  TOOL_CALL,
  UNTRUSTED_GATEWAY,
  type CibaAgent,
  type CibaFixture,
} from '../support/ciba-fixture';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const UNKNOWN_USER = { error: 'unknown_user_id', error_description: 'the hint names no person who allows this client' };

function errorOf(response: HttpResponse): { error: string; error_description: string } {
  return response.json<{ error: string; error_description: string }>();
}

/**
 * `POST /oauth2/bc-authorize` (OpenID CIBA Core 1.0 §7, poll mode; docs/ciba.md "The endpoint") over
 * real HTTP: client authentication both ways, each parameter's refusal in the documented order,
 * the hint that tells nobody whether a person exists, the answer, and the metadata members.
 */
describe.each(testBackends())('the backchannel authentication endpoint on $name', (backend) => {
  let ciba: CibaFixture;
  let agent: CibaAgent;

  beforeAll(async () => {
    ciba = await startCibaFixture({ backend });
    agent = await ciba.agent([ALICE]);
  });

  afterAll(async () => {
    await ciba?.stop();
  });

  /** A valid request of `agent` for Alice, `fields` over it (a field given as '' is left out). */
  function request(fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<HttpResponse> {
    const all: Record<string, string> = {
      login_hint: ALICE,
      authorization_details: JSON.stringify([toolCall()]),
      binding_message: 'W4SCT',
      ...fields,
    };
    for (const [name, value] of Object.entries(all)) if (value === '') delete all[name];
    return ciba.bcAuthorize(all, { authorization: agent.basic, ...headers });
  }

  it('answers auth_req_id, expires_in and interval, never cached', async () => {
    const response = await request();
    expect(response.status, response.text).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json<{ auth_req_id: string; expires_in: number; interval: number }>();
    expect(Object.keys(body).sort()).toEqual(['auth_req_id', 'expires_in', 'interval']);
    expect(body.auth_req_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body).toMatchObject({ expires_in: 600, interval: 5 });
    // requested_expiry shortens it.
    expect((await request({ requested_expiry: '120' })).json<{ expires_in: number }>().expires_in).toBe(120);
  });

  it('authenticates an agent by client_secret_post as well as Basic, and refuses a public agent (CIBA clients are confidential)', async () => {
    const post = await ciba.bcAuthorize(
      {
        client_id: agent.id,
        client_secret: agent.secret,
        login_hint: ALICE,
        authorization_details: JSON.stringify([toolCall()]),
      },
      {},
    );
    expect(post.status, post.text).toBe(200);
    const publicAgent = await ciba.agent([ALICE], { public: true });
    const refused = await ciba.bcAuthorize({
      client_id: publicAgent.id,
      login_hint: ALICE,
      authorization_details: JSON.stringify([toolCall()]),
    });
    expect(refused.status).toBe(401);
    expect(errorOf(refused).error).toBe('invalid_client');
  });

  it('refuses a wrong secret with 401 invalid_client and the Basic challenge, an unknown client without it', async () => {
    const wrong = await request({}, { authorization: `Basic ${Buffer.from(`${agent.id}:nope`).toString('base64')}` });
    expect(wrong.status).toBe(401);
    expect(errorOf(wrong)).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(wrong.headers['www-authenticate']).toBe('Basic realm="oauth2", charset="UTF-8"');
    const unknown = await ciba.bcAuthorize({
      client_id: '00000000-0000-4000-8000-000000000000',
      client_secret: 'x',
      login_hint: ALICE,
      authorization_details: '[]',
    });
    expect(unknown.status).toBe(401);
    expect(errorOf(unknown).error).toBe('invalid_client');
    expect(unknown.headers['www-authenticate']).toBeUndefined();
  });

  it('authenticates the gateway by its client assertion with client_id naming the agent, after verifying the assertion', async () => {
    const gatewayForm = async (fields: Record<string, string>): Promise<HttpResponse> =>
      ciba.bcAuthorize({
        client_assertion_type: JWT_BEARER,
        client_assertion: await ciba.gateway.assertion(),
        client_id: agent.id,
        login_hint: ALICE,
        authorization_details: JSON.stringify([toolCall()]),
        ...fields,
      });
    const ok = await gatewayForm({});
    expect(ok.status, ok.text).toBe(200);
    const missingId = await gatewayForm({ client_id: '' });
    expect(missingId.status).toBe(400);
    expect(errorOf(missingId)).toEqual({
      error: 'invalid_request',
      error_description: 'client_id is required with a client assertion: the agent asked for',
    });
    const unknown = await gatewayForm({ client_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(401);
    expect(errorOf(unknown)).toEqual({ error: 'invalid_client', error_description: 'unknown client' });
    // A forged assertion is refused before client_id is looked at: the same answer for a known and an unknown agent.
    const forged = await gatewayForm({ client_assertion: 'e30.e30.c2ln' });
    const forgedUnknown = await gatewayForm({
      client_assertion: 'e30.e30.c2ln',
      client_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(forged.status).toBe(401);
    expect(forged.text).toBe(forgedUnknown.text);
    expect(errorOf(forged).error).toBe('invalid_client');
    const wrongType = await gatewayForm({ client_assertion_type: 'urn:example:other' });
    expect(wrongType.status).toBe(400);
    expect(errorOf(wrongType).error).toBe('invalid_request');
    // A gateway the authorization expression refuses: 403 access_denied, as for the token exchange.
    const refused = await gatewayForm({ client_assertion: await ciba.gateway.assertion({ sub: UNTRUSTED_GATEWAY }) });
    expect(refused.status).toBe(403);
    expect(errorOf(refused)).toEqual({ error: 'access_denied', error_description: 'the gateway is not authorized' });
    // Two methods at once.
    const both = await gatewayForm({ client_secret: agent.secret });
    expect(errorOf(both)).toEqual({
      error: 'invalid_request',
      error_description: 'use one client authentication method, not two',
    });
  });

  it('refuses a suspended agent with 401 invalid_client "the agent is suspended"', async () => {
    const suspended = await ciba.agent([ALICE]);
    const put = await ciba.admin.put(`/api/agents/${suspended.id}/suspension`, { reason: 'investigation' });
    expect(put.status, put.text).toBeLessThan(300);
    const response = await ciba.bcAuthorize(
      { login_hint: ALICE, authorization_details: JSON.stringify([toolCall()]) },
      { authorization: suspended.basic },
    );
    expect(response.status).toBe(401);
    expect(errorOf(response)).toEqual({ error: 'invalid_client', error_description: 'the agent is suspended' });
  });

  it.each(['request', 'login_hint_token', 'id_token_hint', 'user_code'])(
    'refuses %s with invalid_request naming it',
    async (name) => {
      const response = await request({ [name]: 'x' });
      expect(response.status).toBe(400);
      expect(errorOf(response)).toEqual({
        error: 'invalid_request',
        error_description: `${name} is not supported: name the person with login_hint`,
      });
    },
  );

  it('refuses a request without login_hint or authorization_details, a repeated parameter, and another content type', async () => {
    expect(errorOf(await request({ login_hint: '' }))).toEqual({
      error: 'invalid_request',
      error_description: 'login_hint is required',
    });
    expect(errorOf(await request({ authorization_details: '' })).error).toBe('invalid_request');
    const repeated = await http(`${ciba.base}/oauth2/bc-authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: agent.basic },
      body: `login_hint=a&login_hint=b&authorization_details=${encodeURIComponent(JSON.stringify([toolCall()]))}`,
    });
    expect(repeated.status).toBe(400);
    expect(errorOf(repeated)).toEqual({
      error: 'invalid_request',
      error_description: 'parameter login_hint is repeated',
    });
    const json = await http(`${ciba.base}/oauth2/bc-authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: agent.basic },
      body: JSON.stringify({ login_hint: ALICE }),
    });
    expect(json.status).toBe(400);
    expect(errorOf(json).error).toBe('invalid_request');
  });

  it('checks authorization_details before scope, binding_message, requested_expiry and the hint', async () => {
    const all = {
      authorization_details: JSON.stringify([toolCall({ type: 'urn:example:other' })]),
      scope: 'openid',
      binding_message: '',
      requested_expiry: '0',
      login_hint: 'nobody@example.com',
    };
    expect(errorOf(await request(all)).error).toBe('invalid_authorization_details');
    expect(errorOf(await request({ ...all, authorization_details: JSON.stringify([toolCall()]) })).error).toBe(
      'invalid_scope',
    );
    expect(
      errorOf(
        await request({
          ...all,
          authorization_details: JSON.stringify([toolCall()]),
          scope: '',
          binding_message: 'x'.repeat(101),
        }),
      ).error,
    ).toBe('invalid_binding_message');
    expect(
      errorOf(
        await request({
          ...all,
          authorization_details: JSON.stringify([toolCall()]),
          scope: '',
          binding_message: 'ok',
        }),
      ).error,
    ).toBe('invalid_request');
    expect(
      errorOf(
        await request({
          ...all,
          authorization_details: JSON.stringify([toolCall()]),
          scope: '',
          binding_message: 'ok',
          requested_expiry: '60',
        }),
      ),
    ).toEqual(UNKNOWN_USER);
  });

  it('refuses authorization_details that are not one registered tool call with invalid_authorization_details, never a 500', async () => {
    const cases: string[] = [
      JSON.stringify([toolCall({ locations: ['https://unregistered.example.com/mcp'] })]),
      JSON.stringify([toolCall(), toolCall()]),
      JSON.stringify([toolCall({ extra: 1 })]),
      JSON.stringify(toolCall()),
      '[',
      '['.repeat(100_000),
      JSON.stringify([toolCall({ arguments: { blob: 'x'.repeat(70_000) } })]),
    ];
    for (const details of cases) {
      const response = await request({ authorization_details: details });
      expect(response.status, details.slice(0, 80)).toBe(400);
      expect(errorOf(response).error).toBe('invalid_authorization_details');
    }
    expect(errorOf(await request({ authorization_details: cases[0] as string })).error_description).toBe(
      'locations[0] is not the resource URI of a registered MCP server',
    );
  });

  it('takes a body up to 2 MiB and refuses a larger one with invalid_request', async () => {
    const big = await request({ padding: 'x'.repeat(1024 * 1024) });
    expect(big.status, big.text).toBe(200);
    const huge = await request({ padding: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(400);
    expect(errorOf(huge).error).toBe('invalid_request');
  });

  it('refuses openid and a scope the grant does not give for the MCP server with invalid_scope, and takes a granted one', async () => {
    expect(errorOf(await request({ scope: 'openid' }))).toEqual({
      error: 'invalid_scope',
      error_description: 'this server issues no ID tokens; ask for the tool call in authorization_details',
    });
    expect(errorOf(await request({ scope: 'payments.admin' })).error).toBe('invalid_scope');
    expect((await request({ scope: 'payments.send' })).status).toBe(200);
  });

  it('refuses a bad binding_message with invalid_binding_message and a requested_expiry over the maximum with invalid_request', async () => {
    for (const message of ['x'.repeat(101), 'two\nlines'])
      expect(errorOf(await request({ binding_message: message })).error).toBe('invalid_binding_message');
    expect(errorOf(await request({ requested_expiry: '3601' }))).toEqual({
      error: 'invalid_request',
      error_description: 'requested_expiry must be at most 3600 seconds',
    });
  });

  it('answers an unknown person, a person without a grant and a revoked grant byte for byte alike (unknown_user_id)', async () => {
    const nobody = await request({ login_hint: 'nobody@example.com' });
    const bob = await request({ login_hint: BOB });
    const withScope = await request({ login_hint: BOB, scope: 'payments.send' });
    const revoked = await ciba.agent([BOB]);
    const gone = await new ApiClient(ciba.base, BOB).delete(`/api/consent/agents/${revoked.id}/grants`);
    expect(gone.status).toBe(204);
    const afterRevoke = await ciba.bcAuthorize(
      { login_hint: BOB, authorization_details: JSON.stringify([toolCall()]) },
      { authorization: revoked.basic },
    );
    for (const response of [nobody, bob, withScope, afterRevoke]) {
      expect(response.status).toBe(400);
      expect(response.json()).toEqual(UNKNOWN_USER);
    }
    expect(bob.text).toBe(nobody.text);
    expect(afterRevoke.text).toBe(nobody.text);
  });

  it('answers the same request on the Nest route when a query string makes it miss the hot route', async () => {
    const response = await ciba.bcAuthorize(
      { login_hint: ALICE, authorization_details: JSON.stringify([toolCall()]) },
      { authorization: agent.basic },
      '/oauth2/bc-authorize?via=express',
    );
    expect(response.status, response.text).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.json<{ auth_req_id: string }>().auth_req_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('publishes the CIBA and RAR metadata members and the grant type', async () => {
    const metadata = (await http(`${ciba.base}/.well-known/oauth-authorization-server`)).json<
      Record<string, unknown>
    >();
    expect(metadata).toMatchObject({
      backchannel_authentication_endpoint: `${ciba.base}/oauth2/bc-authorize`,
      backchannel_token_delivery_modes_supported: ['poll'],
      backchannel_user_code_parameter_supported: false,
      authorization_details_types_supported: [TOOL_CALL],
    });
    expect(metadata.grant_types_supported).toContain(CIBA_GRANT);
    expect(metadata.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
  });
});

describe('CIBA in hybrid mode', () => {
  let ciba: CibaFixture;

  beforeAll(async () => {
    ciba = await startCibaFixture({
      server: {
        mode: 'hybrid',
        proxy: {
          upstream_authorize_endpoint: 'https://idp.invalid/authorize',
          upstream_token_endpoint: 'https://idp.invalid/token',
          upstream_jwks_uri: 'https://idp.invalid/jwks',
        },
      },
    });
  });

  afterAll(async () => {
    await ciba?.stop();
  });

  const ask = async (agentId: string): Promise<HttpResponse> =>
    ciba.bcAuthorize({
      client_assertion_type: JWT_BEARER,
      client_assertion: await ciba.gateway.assertion(),
      client_id: agentId,
      login_hint: ALICE,
      authorization_details: JSON.stringify([toolCall()]),
    });

  it('serves the agents whose tokens the broker issues, and refuses an upstream agent with 403 unauthorized_client', async () => {
    const local = await ciba.agent([ALICE]);
    const asked = await ask(local.id);
    expect(asked.status, asked.text).toBe(200);
    const poll = await ciba.token({
      grant_type: CIBA_GRANT,
      auth_req_id: asked.json<{ auth_req_id: string }>().auth_req_id,
      client_assertion_type: JWT_BEARER,
      client_assertion: await ciba.gateway.assertion(),
      client_id: local.id,
    });
    expect(poll.status, poll.text).toBe(400);
    expect(errorOf(poll).error).toBe('authorization_pending');
    const upstream = await ciba.admin.post('/api/agents', {
      display_name: 'Upstream Agent',
      client_id: 'upstream-agent',
      permission_sets: [{ permission_set_id: ciba.permissionSet, requirement_type: 'mandatory' }],
    });
    expect(upstream.status, upstream.text).toBe(201);
    const refused = await ask(upstream.json<{ id: string }>().id);
    expect(refused.status).toBe(403);
    expect(errorOf(refused)).toEqual({
      error: 'unauthorized_client',
      error_description: 'this client gets its tokens from the upstream authorization server',
    });
  });
});

describe('CIBA turned off (the default)', () => {
  let base: string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { server: { enduser: { port, public_url: base } } },
    });
    stop = () => broker.stop();
  });

  afterAll(async () => {
    await stop?.();
  });

  it('has no endpoint (404 like an unknown route), no metadata members and no grant type', async () => {
    const post = (path: string, body: string): Promise<HttpResponse> =>
      http(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const endpoint = await post('/oauth2/bc-authorize', 'login_hint=alice');
    const unknown = await post('/oauth2/bc-nothing', 'login_hint=alice');
    expect(endpoint.status).toBe(404);
    expect(endpoint.json<{ error: string }>().error).toBe('not_found');
    expect(endpoint.text.replace('bc-authorize', 'bc-nothing')).toBe(unknown.text);
    // Its body is not read either: 3 MiB is the same 404.
    const large = await post('/oauth2/bc-authorize', `login_hint=${'a'.repeat(3 * 1024 * 1024)}`);
    expect(large.status).toBe(404);
    const metadata = (await http(`${base}/.well-known/oauth-authorization-server`)).json<Record<string, unknown>>();
    for (const member of [
      'backchannel_authentication_endpoint',
      'backchannel_token_delivery_modes_supported',
      'backchannel_user_code_parameter_supported',
      'authorization_details_types_supported',
    ])
      expect(metadata).not.toHaveProperty(member);
    expect(metadata.grant_types_supported).not.toContain(CIBA_GRANT);
    const token = await post('/oauth2/token', `grant_type=${encodeURIComponent(CIBA_GRANT)}&auth_req_id=x`);
    expect(token.status).toBe(400);
    expect(token.json<{ error: string }>().error).toBe('unsupported_grant_type');
  });

  it('refuses to start in proxy mode with CIBA enabled, naming the key', async () => {
    const port = await freePort();
    await expect(
      startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          server: { enduser: { port, public_url: `http://127.0.0.1:${port}` } },
          oauth2_authorization_server: {
            mode: 'proxy',
            ciba: { enabled: true },
            proxy: {
              upstream_authorize_endpoint: 'https://idp.example.com/authorize',
              upstream_token_endpoint: 'https://idp.example.com/token',
              upstream_jwks_uri: 'https://idp.example.com/jwks',
            },
          },
        },
      }),
    ).rejects.toThrow('oauth2_authorization_server.ciba.enabled CIBA needs local or hybrid mode');
  });
});
