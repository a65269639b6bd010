import { createHash } from 'node:crypto';
import {
  ApiClient,
  http,
  startGatewayFixture,
  startTestBroker,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ADMIN = 'admin@example.com';
const OTHER_ADMIN = 'bob@example.com';
const VIEWER = 'auditor@example.com';

interface Suspension {
  suspended_at: string;
  suspended_by: string;
  reason: string | null;
}

interface LedgerItem {
  type: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  principal: string | null;
  details: Record<string, unknown>;
}

// docs/admin-api.md "Suspending an agent": the admin API's suspension routes and the agent answers.
describe.each(testBackends())('admin: suspending an agent on $name', (backend) => {
  let broker: TestBroker;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        storage: await backend.storage(),
        server: { admin: { authorization: { viewers: [VIEWER] } } },
      },
    });
    admin = new ApiClient(broker.url('admin'), ADMIN);
  });

  afterAll(async () => {
    await broker.stop();
  });

  const newAgent = async (name: string): Promise<string> => {
    const created = await admin.post('/api/agents', { display_name: name });
    expect(created.status, created.text).toBe(201);
    return created.json<{ id: string }>().id;
  };

  const ledger = async (agentId: string): Promise<LedgerItem[]> => {
    const read = await admin.get(`/api/events?agent_id=${agentId}&type=agent.suspended,agent.resumed`);
    expect(read.status, read.text).toBe(200);
    return read.json<{ items: LedgerItem[] }>().items;
  };

  it('suspends (200 with the suspension), shows it on every agent answer, and resumes (204)', async () => {
    const id = await newAgent('Expense assistant');
    const before = Date.now();
    const suspended = await admin.put(`/api/agents/${id}/suspension`, {
      reason: 'Credentials leaked in a public repository',
    });
    expect(suspended.status, suspended.text).toBe(200);
    const suspension = suspended.json<Suspension>();
    expect(Object.keys(suspension).sort()).toEqual(['reason', 'suspended_at', 'suspended_by']);
    expect(suspension).toMatchObject({ suspended_by: ADMIN, reason: 'Credentials leaked in a public repository' });
    expect(new Date(suspension.suspended_at).toISOString()).toBe(suspension.suspended_at);
    expect(new Date(suspension.suspended_at).getTime()).toBeGreaterThanOrEqual(before - 1000);

    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension });
    const listed = (await admin.get('/api/agents')).json<{ id: string; suspension: unknown }[]>();
    expect(listed.find((agent) => agent.id === id)?.suspension).toEqual(suspension);
    const read = await admin.get(`/api/agents/${id}/suspension`);
    expect(read.status, read.text).toBe(200);
    expect(read.json()).toEqual(suspension);
    // A PUT of the agent keeps the suspension: it is no field of the agent's body.
    const replaced = await admin.put(`/api/agents/${id}`, { display_name: 'Expense assistant (renamed)' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.json()).toMatchObject({ display_name: 'Expense assistant (renamed)', suspension });

    const resumed = await admin.delete(`/api/agents/${id}/suspension`);
    expect(resumed.status, resumed.text).toBe(204);
    expect(resumed.text).toBe('');
    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension: null });
    const gone = await admin.get(`/api/agents/${id}/suspension`);
    expect(gone.status, gone.text).toBe(404);
    expect(gone.json()).toEqual({ error: 'not_found', message: `agent ${id} is not suspended` });
  });

  it('keeps the original suspension when suspended again, by anyone, with any reason', async () => {
    const id = await newAgent('Calendar assistant');
    const first = (await admin.put(`/api/agents/${id}/suspension`, { reason: 'first' })).json<Suspension>();
    const again = await admin.as(OTHER_ADMIN).put(`/api/agents/${id}/suspension`, { reason: 'second' });
    expect(again.status, again.text).toBe(200);
    expect(again.json()).toEqual(first);
    expect((await ledger(id)).map((event) => event.type)).toEqual(['agent.suspended']);
  });

  it('takes no body, an empty one, a null or blank reason as no reason', async () => {
    for (const body of [undefined, {}, { reason: null }, { reason: '   ' }]) {
      const id = await newAgent('No reason');
      const suspended = await admin.put(`/api/agents/${id}/suspension`, body);
      expect(suspended.status, suspended.text).toBe(200);
      expect(suspended.json()).toMatchObject({ suspended_by: ADMIN, reason: null });
    }
  });

  it('resuming an agent that is not suspended is 204 and records nothing', async () => {
    const id = await newAgent('Never suspended');
    const resumed = await admin.delete(`/api/agents/${id}/suspension`);
    expect(resumed.status, resumed.text).toBe(204);
    expect(await ledger(id)).toEqual([]);
  });

  it('records agent.suspended and agent.resumed by the administrator, with the reason', async () => {
    const id = await newAgent('Evented');
    await admin.put(`/api/agents/${id}/suspension`, { reason: 'Incident 7' });
    expect((await admin.as(OTHER_ADMIN).delete(`/api/agents/${id}/suspension`)).status).toBe(204);
    const [resumed, suspended] = await ledger(id);
    expect(suspended).toMatchObject({
      type: 'agent.suspended',
      actor: { type: 'admin', id: ADMIN },
      agent_id: id,
      principal: null,
      details: { reason: 'Incident 7' },
    });
    expect(resumed).toMatchObject({
      type: 'agent.resumed',
      actor: { type: 'admin', id: OTHER_ADMIN },
      agent_id: id,
      principal: null,
      details: { reason: 'Incident 7' },
    });
  });

  it('lets a viewer read a suspension but neither suspend nor resume (403, nothing changes)', async () => {
    const id = await newAgent('Viewed');
    const viewer = admin.as(VIEWER);
    for (const refused of [
      await viewer.put(`/api/agents/${id}/suspension`, { reason: 'not mine to give' }),
      await viewer.delete(`/api/agents/${id}/suspension`),
    ]) {
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json()).toMatchObject({ error: 'forbidden' });
    }
    expect((await viewer.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension: null });
    await admin.put(`/api/agents/${id}/suspension`, { reason: 'by an administrator' });
    expect((await viewer.delete(`/api/agents/${id}/suspension`)).status).toBe(403);
    const read = await viewer.get(`/api/agents/${id}/suspension`);
    expect(read.status, read.text).toBe(200);
    expect(read.json()).toMatchObject({ suspended_by: ADMIN, reason: 'by an administrator' });
    expect((await ledger(id)).map((event) => event.type)).toEqual(['agent.suspended']);
  });

  it('answers 404 agent not found for an unknown agent on every route', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const response of [
      await admin.put(`/api/agents/${unknown}/suspension`, {}),
      await admin.get(`/api/agents/${unknown}/suspension`),
      await admin.delete(`/api/agents/${unknown}/suspension`),
    ]) {
      expect(response.status, response.text).toBe(404);
      expect(response.json()).toEqual({ error: 'agent not found', message: `no agent ${unknown}` });
    }
  });

  it('refuses a reason over 500 characters, an unknown field, and suspension in an agent body', async () => {
    const id = await newAgent('Validated');
    const long = await admin.put(`/api/agents/${id}/suspension`, { reason: 'x'.repeat(501) });
    expect(long.status, long.text).toBe(400);
    expect(long.json()).toMatchObject({ error: 'validation failed', details: [{ field: 'reason' }] });
    const unknown = await admin.put(`/api/agents/${id}/suspension`, { reason: 'ok', until: 'tomorrow' });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'invalid request body' });
    const inBody = await admin.put(`/api/agents/${id}`, { display_name: 'Validated', suspension: null });
    expect(inBody.status, inBody.text).toBe(400);
    expect(inBody.json()).toMatchObject({ error: 'invalid request body' });
    const created = await admin.post('/api/agents', {
      display_name: 'Suspended at birth',
      suspension: { suspended_at: new Date().toISOString(), suspended_by: ADMIN, reason: null },
    });
    expect(created.status, created.text).toBe(400);
    expect(created.json()).toMatchObject({ error: 'invalid request body' });
    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension: null });
  });
});

const ALICE = 'alice@example.com';
const RESOURCE = 'https://mail.example.com/api';
const REDIRECT = 'https://agent.example.com/cb';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SUSPENDED_EXCHANGE = { error: 'access_denied', error_description: 'the agent is suspended by an administrator' };
const SUSPENDED_CLIENT = { error: 'invalid_client', error_description: 'the agent is suspended' };

/**
 * A suspended agent is refused on every path at once, and resuming restores exactly what was
 * there: the same refresh token, the person's grant and connection, the approved call
 * (docs/admin-api.md "Suspending an agent"). Every request is real HTTP against one broker.
 */
describe.each(testBackends())('a suspended agent is refused everywhere on $name', (backend) => {
  let gateway: GatewayFixture;
  let base: string;
  let admin: ApiClient;
  let alice: ApiClient;
  let agent: { id: string; secret: string };
  let service: string;
  let set: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      subjectAudience: 'gateway',
      gatewaySub: 'gateway',
      ttlSeconds: 3600,
      config: { server: { enduser: { consent_ui_url: 'https://consent.example.com' } } },
    });
    base = gateway.base;
    admin = new ApiClient(gateway.broker.url('admin'), ADMIN);
    alice = new ApiClient(base, ALICE);
    service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'mail-client',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/authorize',
        token_endpoint: 'https://idp.example.com/token',
        scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
        protected_resources: [RESOURCE],
      })
    ).json<{ id: string }>().id;
    set = (
      await admin.post('/api/permission-sets', {
        name: 'Read mail',
        description: 'Read your mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Expense assistant',
        redirect_uris: [REDIRECT],
        allowed_scopes: ['mail.read', 'profile', 'offline_access'],
        permission_sets: [{ permission_set_id: set }],
      })
    ).json<{ id: string }>().id;
    const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    secrets.push(secret);
    agent = { id, secret };
    const granted = await alice.post(`/api/consent/agents/${id}/grants`, {
      granted_permission_sets: { [set]: [service] },
    });
    expect(granted.status, granted.text).toBe(201);
    await gateway.broker.broker
      .server('enduser')
      .app.get(TokenVault)
      .store(ALICE, service, {
        accessToken: 'third-party-access-token-1234567890',
        tokenType: 'Bearer',
        refreshToken: undefined,
        expiresIn: 3600,
        refreshTokenExpiresIn: undefined,
        scopes: ['mail.read'],
      });
    secrets.push('third-party-access-token-1234567890');
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const remember = (token: string): string => {
    secrets.push(token);
    return token;
  };
  const basic = (): string => `Basic ${Buffer.from(`${agent.id}:${agent.secret}`).toString('base64')}`;
  const token = (fields: Record<string, string>, authorization: string | undefined = basic()): Promise<HttpResponse> =>
    http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { ...FORM, ...(authorization === undefined ? {} : { authorization }) },
      body: new URLSearchParams(fields).toString(),
    });
  const exchange = async (): Promise<HttpResponse> =>
    (await gateway.exchange(ALICE, agent.id, { resource: RESOURCE })).response;
  const clientCredentials = (): Promise<HttpResponse> => token({ grant_type: 'client_credentials', scope: 'profile' });
  const verifier = 'suspension-verifier-0123456789-0123456789-0123456789';
  const authorize = (): Promise<HttpResponse> => {
    const url = new URL(`${base}/oauth2/authorize`);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    for (const [name, value] of Object.entries({
      client_id: agent.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mail.read offline_access',
      state: 'state-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(name, value);
    return http(url.toString(), { headers: { 'x-remote-user': ALICE } });
  };
  /** An authorization code of Alice's for the agent (the authorize endpoint's redirect). */
  const code = async (): Promise<string> => {
    const redirect = await authorize();
    expect(redirect.status, redirect.text).toBe(302);
    return remember(new URL(String(redirect.headers.location)).searchParams.get('code') as string);
  };
  const redeem = (value: string): Promise<HttpResponse> =>
    token({ grant_type: 'authorization_code', code: value, redirect_uri: REDIRECT, code_verifier: verifier });
  const refresh = (value: string): Promise<HttpResponse> =>
    token({ grant_type: 'refresh_token', refresh_token: value });
  /** Introspection by the gateway (its client assertion), which may ask about any token. */
  const introspect = async (value: string): Promise<Record<string, unknown>> => {
    const response = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: FORM,
      body: new URLSearchParams({
        token: value,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: remember(await gateway.assertion()),
      }).toString(),
    });
    expect(response.status, response.text).toBe(200);
    return response.json();
  };
  const approvals = async (path: string, body?: unknown): Promise<HttpResponse> =>
    http(`${base}/api/approvals${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${remember(await gateway.subjectToken(ALICE, agent.id))}`,
        'x-client-assertion': remember(await gateway.assertion()),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const askApproval = (tool: string): Promise<HttpResponse> =>
    approvals('', { metadata: {}, tool_name: tool, arguments: { path: '/srv/app' }, risk_level: 'critical' });
  const suspend = async (): Promise<void> => {
    const response = await admin.put(`/api/agents/${agent.id}/suspension`, { reason: 'Incident 42' });
    expect(response.status, response.text).toBe(200);
  };
  const resume = async (): Promise<void> => {
    expect((await admin.delete(`/api/agents/${agent.id}/suspension`)).status).toBe(204);
  };
  const expectError = (response: HttpResponse, status: number, body: Record<string, unknown>): void => {
    expect(response.status, response.text).toBe(status);
    expect(response.json()).toEqual(body);
  };

  it('refuses every path while suspended, and resuming restores exactly what was there', async () => {
    // Before: everything works.
    expect((await exchange()).status).toBe(200);
    const cc = await clientCredentials();
    expect(cc.status, cc.text).toBe(200);
    const machineToken = remember(cc.json<{ access_token: string }>().access_token);
    const first = await redeem(await code());
    expect(first.status, first.text).toBe(200);
    const { access_token: personToken, refresh_token: refreshToken } = first.json<{
      access_token: string;
      refresh_token: string;
    }>();
    remember(personToken);
    remember(refreshToken);
    for (const value of [machineToken, personToken, refreshToken])
      expect(await introspect(value)).toMatchObject({ active: true });
    const unredeemed = await code();
    const asked = await askApproval('delete_file');
    expect(asked.status, asked.text).toBe(201);
    const approvalId = asked.json<{ data: { id: string } }>().data.id;
    expect((await alice.post(`/api/approvals/${approvalId}/approve`, { persistence: 'once' })).status).toBe(200);

    await suspend();

    // Token exchange: 403 access_denied, with no authorization request to offer the person.
    const refused = await exchange();
    expectError(refused, 403, SUSPENDED_EXCHANGE);
    // The agent's own token requests: its client is refused (RFC 6749 §5.2), before any grant is looked at.
    expectError(await clientCredentials(), 401, SUSPENDED_CLIENT);
    expectError(await refresh(refreshToken), 401, SUSPENDED_CLIENT);
    expectError(await redeem(unredeemed), 401, SUSPENDED_CLIENT);
    // Introspection: none of its tokens is active.
    for (const value of [machineToken, personToken, refreshToken])
      expect(await introspect(value)).toEqual({ active: false });
    // The authorize endpoint: answered to the person, never redirected to the agent.
    expectError(await authorize(), 403, SUSPENDED_EXCHANGE);
    // Approvals: the agent may neither ask nor use an approved call.
    const askedWhileSuspended = await askApproval('rm_rf');
    expect(askedWhileSuspended.status, askedWhileSuspended.text).toBe(403);
    expect(askedWhileSuspended.json()).toEqual({
      error: 'forbidden',
      message: `agent suspended: an administrator suspended agent ${agent.id}`,
    });
    expectError(await approvals(`/${approvalId}/consume`), 403, {
      error: 'forbidden',
      message: `agent suspended: an administrator suspended agent ${agent.id}`,
    });

    // The person's consent API: the agent page says so, and allowing it is refused (its grant is not touched).
    const detail = await alice.get(`/api/consent/agents/${agent.id}`);
    expect(detail.status, detail.text).toBe(200);
    expect(detail.json()).toMatchObject({ data: { agent: { id: agent.id, suspended: true } } });
    expectError(
      await alice.post(`/api/consent/agents/${agent.id}/grants`, { granted_permission_sets: { [set]: [service] } }),
      403,
      {
        error: 'forbidden',
        message: 'agent suspended: your administrators suspended Expense assistant; it can be revoked, not allowed',
      },
    );

    await resume();

    expect((await alice.get(`/api/consent/agents/${agent.id}`)).json()).toMatchObject({
      data: { agent: { suspended: false } },
    });
    // The same refresh token works: the refused refresh spent nothing.
    const rotated = await refresh(refreshToken);
    expect(rotated.status, rotated.text).toBe(200);
    remember(rotated.json<{ refresh_token: string }>().refresh_token);
    remember(rotated.json<{ access_token: string }>().access_token);
    // The grant and the connection are intact: the exchange is served again.
    expect((await exchange()).status).toBe(200);
    expect((await alice.get(`/api/consent/agents/${agent.id}/grants`)).json()).toMatchObject({
      data: [{ agent_id: agent.id }],
    });
    expect((await clientCredentials()).status).toBe(200);
    for (const value of [machineToken, personToken]) expect(await introspect(value)).toMatchObject({ active: true });
    // The approved call is still approved, and is consumed now.
    const consumed = await approvals(`/${approvalId}/consume`);
    expect(consumed.status, consumed.text).toBe(200);
    expect((await authorize()).status).toBe(302);
  });

  it('lets a suspended agent give its tokens up (RFC 7009), and records the refusals with their errors', async () => {
    const issued = await clientCredentials();
    expect(issued.status, issued.text).toBe(200);
    const machineToken = remember(issued.json<{ access_token: string }>().access_token);
    await suspend();
    try {
      const revoked = await http(`${base}/oauth2/revoke`, {
        method: 'POST',
        headers: { ...FORM, authorization: basic() },
        body: new URLSearchParams({ token: machineToken }).toString(),
      });
      expect(revoked.status, revoked.text).toBe(200);
      expectError(await exchange(), 403, SUSPENDED_EXCHANGE);
    } finally {
      await resume();
    }
    expect(await introspect(machineToken)).toEqual({ active: false });
    await gateway.broker.broker.runtime.database.events.flush();
    const exchanged = (await admin.get(`/api/events?agent_id=${agent.id}&type=token.exchanged`)).json<{
      items: LedgerItem[];
    }>().items;
    expect(exchanged[0]).toMatchObject({ details: { oauth_error: 'access_denied' }, principal: ALICE });
  });

  it('lets the person revoke a suspended agent, which stays revoked once resumed', async () => {
    const other = (
      await admin.post('/api/agents', { display_name: 'Travel planner', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    const allowed = await alice.post(`/api/consent/agents/${other}/grants`, {
      granted_permission_sets: { [set]: [service] },
    });
    expect(allowed.status, allowed.text).toBe(201);
    expect((await admin.put(`/api/agents/${other}/suspension`, {})).status).toBe(200);
    expect((await alice.delete(`/api/consent/agents/${other}/grants`)).status).toBe(204);
    expect((await admin.delete(`/api/agents/${other}/suspension`)).status).toBe(204);
    expect((await alice.get(`/api/consent/agents/${other}/grants`)).json()).toEqual({ data: [] });
    const exchanged = await gateway.exchange(ALICE, other, { resource: RESOURCE });
    expect(exchanged.response.status, exchanged.response.text).toBe(403);
    expect(exchanged.response.json()).toMatchObject({
      error: 'access_denied',
      error_description: 'no active grant delegates this service to the agent',
    });
  });

  it('never writes a secret or token into its logs or answers', () => {
    const logged = JSON.stringify(gateway.broker.logs.records());
    for (const secret of secrets) expect(logged).not.toContain(secret);
  });
});
