import { ApiClient, FrozenClock, http, testBackends, type HttpResponse } from '@broker/testing';
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CIBA_GRANT,
  JWT_BEARER,
  PAY_MCP,
  startCibaFixture,
  toolCall,
  type CibaAgent,
  type CibaFixture,
} from '../support/ciba-fixture';

const ALICE = 'alice@example.com';

interface ErrorBody {
  error: string;
  error_description: string;
}

function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/**
 * The CIBA grant at the token endpoint (OpenID CIBA Core 1.0 §10.1, §11; docs/ciba.md "The endpoint")
 * over real HTTP, with the person deciding through the approvals API as the console does, on an
 * injected frozen clock: pending, slow_down, approval and the token it buys, single use, denial,
 * expiry, the requester's kind, DPoP binding, introspection, and the approvals' rate limits.
 */
describe.each(testBackends())('the CIBA grant on $name', (backend) => {
  const clock = new FrozenClock(new Date());
  let ciba: CibaFixture;
  let alice: ApiClient;

  beforeAll(async () => {
    ciba = await startCibaFixture({ backend, clock });
    alice = new ApiClient(ciba.base, ALICE);
  });

  afterAll(async () => {
    await ciba?.stop();
  });

  /** The agent's request for Alice (Basic), `fields` over it: the auth_req_id. */
  async function requested(agent: CibaAgent, fields: Record<string, string> = {}): Promise<string> {
    const response = await ciba.bcAuthorize(
      {
        login_hint: ALICE,
        authorization_details: JSON.stringify([toolCall()]),
        binding_message: 'W4SCT',
        ...fields,
      },
      { authorization: agent.basic },
    );
    expect(response.status, response.text).toBe(200);
    return response.json<{ auth_req_id: string }>().auth_req_id;
  }

  /** The agent's poll (Basic), with `headers` (a DPoP proof). */
  const poll = (agent: CibaAgent, authReqId: string, headers: Record<string, string> = {}): Promise<HttpResponse> =>
    ciba.token({ grant_type: CIBA_GRANT, auth_req_id: authReqId }, { authorization: agent.basic, ...headers });

  function expectError(response: HttpResponse, error: string): ErrorBody {
    expect(response.status, response.text).toBe(error === 'invalid_client' ? 401 : 400);
    const body = response.json<ErrorBody>();
    expect(body.error).toBe(error);
    expect(response.headers['cache-control']).toBe('no-store');
    return body;
  }

  /** Alice's one pending approval of `agentId` (what the console's list shows her). */
  async function pendingApproval(agentId: string): Promise<string> {
    const list = (await alice.get('/api/approvals/pending')).json<{ data: { id: string; agent_id: string }[] }>().data;
    const ids = list.filter((approval) => approval.agent_id === agentId).map((approval) => approval.id);
    expect(ids).toHaveLength(1);
    return ids[0] as string;
  }

  /** Lets the interval pass, so that the next poll is in time. */
  const waitInterval = (): void => clock.advance(5_000);

  it('answers authorization_pending until the person approves, then the token for exactly the approved call, once', async () => {
    const agent = await ciba.agent([ALICE]);
    const authReqId = await requested(agent, { scope: 'payments.send' });
    expectError(await poll(agent, authReqId), 'authorization_pending');
    const id = await pendingApproval(agent.id);
    expect((await alice.post(`/api/approvals/${id}/approve`, { persistence: 'once' })).status).toBe(200);
    waitInterval();
    const answer = await poll(agent, authReqId);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    const body = answer.json<Record<string, unknown>>();
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 120, scope: 'payments.send' });
    expect(body.authorization_details).toEqual([toolCall()]);
    expect(body).not.toHaveProperty('refresh_token');
    expect(body).not.toHaveProperty('id_token');
    const claims = claimsOf(body.access_token as string);
    expect(claims).toMatchObject({
      sub: ALICE,
      client_id: agent.id,
      agent_id: agent.id,
      aud: PAY_MCP,
      scope: 'payments.send',
      authorization_details: [toolCall()],
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(120);
    // Single use: every later poll, in time or not.
    waitInterval();
    expect(expectError(await poll(agent, authReqId), 'invalid_grant').error_description).toMatch(/already used/);
    waitInterval();
    expectError(await poll(agent, authReqId), 'invalid_grant');
  });

  it('introspection returns the token active with its authorization_details', async () => {
    const agent = await ciba.agent([ALICE]);
    const authReqId = await requested(agent);
    const id = await pendingApproval(agent.id);
    expect((await alice.post(`/api/approvals/${id}/approve`, { persistence: 'once' })).status).toBe(200);
    const token = (await poll(agent, authReqId)).json<{ access_token: string }>().access_token;
    const introspection = await http(`${ciba.base}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: agent.basic },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(introspection.status, introspection.text).toBe(200);
    expect(introspection.json()).toMatchObject({
      active: true,
      sub: ALICE,
      client_id: agent.id,
      aud: PAY_MCP,
      authorization_details: [toolCall()],
    });
  });

  it('answers slow_down to a poll sooner than the interval, and keeps the longer interval', async () => {
    const agent = await ciba.agent([ALICE]);
    const authReqId = await requested(agent);
    expectError(await poll(agent, authReqId), 'authorization_pending');
    expect(expectError(await poll(agent, authReqId), 'slow_down').error_description).toMatch(/10 seconds/);
    // The interval grew to 10 s: 6 s later is still too soon, 11 s later is in time.
    clock.advance(6_000);
    expectError(await poll(agent, authReqId), 'slow_down');
    clock.advance(16_000);
    expectError(await poll(agent, authReqId), 'authorization_pending');
  });

  it('answers access_denied (400) once the person denies', async () => {
    const agent = await ciba.agent([ALICE]);
    const authReqId = await requested(agent);
    const id = await pendingApproval(agent.id);
    expect((await alice.post(`/api/approvals/${id}/deny`)).status).toBe(200);
    expect(expectError(await poll(agent, authReqId), 'access_denied').error_description).toBe(
      'the person denied the request',
    );
  });

  it('answers expired_token past requested_expiry, and the person sees the request expired', async () => {
    const agent = await ciba.agent([ALICE]);
    const authReqId = await requested(agent, { requested_expiry: '30' });
    const id = await pendingApproval(agent.id);
    clock.advance(31_000);
    expectError(await poll(agent, authReqId), 'expired_token');
    expect((await alice.post(`/api/approvals/${id}/approve`, { persistence: 'once' })).status).toBe(410);
  });

  it("refuses another client's auth_req_id, an unknown one, and a poll by the other kind of requester (invalid_grant)", async () => {
    const agent = await ciba.agent([ALICE]);
    const other = await ciba.agent([ALICE]);
    const authReqId = await requested(agent);
    expectError(await poll(other, authReqId), 'invalid_grant');
    expectError(await poll(agent, 'A'.repeat(43)), 'invalid_grant');
    expectError(await poll(agent, 'A'.repeat(5000)), 'invalid_grant');
    // The agent asked itself: the gateway cannot poll for it.
    const byGateway = await ciba.token({
      grant_type: CIBA_GRANT,
      auth_req_id: authReqId,
      client_assertion_type: JWT_BEARER,
      client_assertion: await ciba.gateway.assertion(),
      client_id: agent.id,
    });
    expectError(byGateway, 'invalid_grant');
    // A gateway's request is polled by the gateway, for the same agent.
    const asked = await ciba.bcAuthorize({
      client_assertion_type: JWT_BEARER,
      client_assertion: await ciba.gateway.assertion(),
      client_id: agent.id,
      login_hint: ALICE,
      authorization_details: JSON.stringify([toolCall({ tool: 'refund' })]),
    });
    expect(asked.status, asked.text).toBe(200);
    const gatewayReqId = asked.json<{ auth_req_id: string }>().auth_req_id;
    expectError(await poll(agent, gatewayReqId), 'invalid_grant');
    const gatewayPoll = await ciba.token({
      grant_type: CIBA_GRANT,
      auth_req_id: gatewayReqId,
      client_assertion_type: JWT_BEARER,
      client_assertion: await ciba.gateway.assertion(),
      client_id: agent.id,
    });
    expectError(gatewayPoll, 'authorization_pending');
    // Missing auth_req_id.
    expectError(await ciba.token({ grant_type: CIBA_GRANT }, { authorization: agent.basic }), 'invalid_request');
  });

  it('binds the token to a DPoP proof, and refuses a DPoP-required agent without one before spending the approval', async () => {
    const agent = await ciba.agent([ALICE], { dpop: true });
    const authReqId = await requested(agent);
    const id = await pendingApproval(agent.id);
    expect((await alice.post(`/api/approvals/${id}/approve`, { persistence: 'once' })).status).toBe(200);
    expectError(await poll(agent, authReqId), 'invalid_dpop_proof');
    const pair = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(pair.publicKey);
    const proof = await new SignJWT({
      htm: 'POST',
      htu: `${ciba.base}/oauth2/token`,
      jti: randomUUID(),
      iat: Math.floor(clock.now().getTime() / 1000),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .sign(pair.privateKey);
    waitInterval();
    const answer = await poll(agent, authReqId, { dpop: proof });
    expect(answer.status, answer.text).toBe(200);
    const body = answer.json<{ token_type: string; access_token: string }>();
    expect(body.token_type).toBe('DPoP');
    expect(claimsOf(body.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(jwk, 'sha256') });
  });

  it('refuses a suspended agent at the poll with invalid_client', async () => {
    const agent = await ciba.agent([ALICE]);
    const authReqId = await requested(agent);
    expect((await ciba.admin.put(`/api/agents/${agent.id}/suspension`, { reason: 'audit' })).status).toBeLessThan(300);
    expect(expectError(await poll(agent, authReqId), 'invalid_client').error_description).toBe(
      'the agent is suspended',
    );
  });

  it('logs no auth_req_id, secret, assertion, token or binding message; the audit record says why a person was unknown', async () => {
    const agent = await ciba.agent([ALICE]);
    const logs = ciba.gateway.broker.logs;
    const assertion = await ciba.gateway.assertion();
    const secrets: string[] = [agent.secret, assertion, 'W4SCT-unique-words'];
    const asked = await ciba.bcAuthorize({
      client_assertion_type: JWT_BEARER,
      client_assertion: assertion,
      client_id: agent.id,
      login_hint: ALICE,
      binding_message: 'W4SCT-unique-words',
      authorization_details: JSON.stringify([toolCall({ tool: 'audited' })]),
    });
    const gatewayReqId = asked.json<{ auth_req_id: string }>().auth_req_id;
    const authReqId = await requested(agent, { binding_message: 'W4SCT-unique-words' });
    secrets.push(gatewayReqId, authReqId);
    const ids = (await alice.get('/api/approvals/pending')).json<{ data: { id: string; agent_id: string }[] }>().data;
    for (const approval of ids.filter((a) => a.agent_id === agent.id))
      expect((await alice.post(`/api/approvals/${approval.id}/approve`, { persistence: 'once' })).status).toBe(200);
    const token = (await poll(agent, authReqId)).json<{ access_token: string }>().access_token;
    secrets.push(token);
    await ciba.bcAuthorize(
      // Over 200 characters: the default expression's result is no principal.
      { login_hint: 'n'.repeat(300), authorization_details: JSON.stringify([toolCall({ tool: 'nobody' })]) },
      { authorization: agent.basic },
    );
    await ciba.bcAuthorize(
      { login_hint: 'carol@example.com', authorization_details: JSON.stringify([toolCall({ tool: 'no-grant' })]) },
      { authorization: agent.basic },
    );
    expect(logs.leaked(secrets)).toEqual([]);
    const audits = logs.records().filter((record) => record.event === 'ciba_request' && record.agent_id === agent.id);
    expect(audits.find((record) => record.tool === 'audited')).toMatchObject({
      outcome: 'created',
      principal: ALICE,
      requester: 'gateway:gateway-1',
      resource: PAY_MCP,
    });
    expect(audits.find((record) => record.tool === 'nobody')).toMatchObject({
      outcome: 'refused',
      oauth_error: 'unknown_user_id',
      reason: 'hint_names_no_principal',
      principal: null,
    });
    expect(audits.find((record) => record.tool === 'no-grant')).toMatchObject({
      outcome: 'refused',
      oauth_error: 'unknown_user_id',
      reason: 'no_active_grant',
      principal: 'carol@example.com',
    });
  });

  it('applies the approvals rate limit: 429 temporarily_unavailable with Retry-After', async () => {
    const agent = await ciba.agent([ALICE]);
    let limited: HttpResponse | undefined;
    for (let i = 0; i < 12 && limited === undefined; i += 1) {
      const response = await ciba.bcAuthorize(
        { login_hint: ALICE, authorization_details: JSON.stringify([toolCall({ arguments: { n: i } })]) },
        { authorization: agent.basic },
      );
      if (response.status !== 200) limited = response;
    }
    expect(limited?.status, limited?.text).toBe(429);
    expect(limited?.json<ErrorBody>().error).toBe('temporarily_unavailable');
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);
  });
});
