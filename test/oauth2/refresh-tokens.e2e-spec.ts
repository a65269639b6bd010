import { EventLedger } from '@broker/events';
import { RefreshTokenRetention } from '@broker/persistence';
import {
  ApiClient,
  freePort,
  FrozenClock,
  http,
  startTestBroker,
  testBackends,
  type TestBroker,
} from '@broker/testing';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const MAIL = 'https://mail.example.com/mcp';
const FILES = 'https://files.example.com/mcp';
const CALENDAR = 'https://calendar.example.com/mcp';
const insecure = { [oauth.allowInsecureRequests]: true };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Refresh tokens of the local authorization server (RFC 6749 §6, OAuth 2.1 §4.3), driven by
 * oauth4webapi on both backends: issued for `offline_access`, rotated on every use, reuse
 * ending the family, bound to client, credential and grant, idle and absolute lifetimes.
 */
describe.each(testBackends())('refresh tokens on $name (oauth4webapi as the client)', (backend) => {
  const clock = new FrozenClock('2026-11-26T12:00:00.000Z');
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let admin: ApiClient;
  let alice: ApiClient;
  let setId: string;
  let serviceId: string;
  let confidential: { id: string; secret: string };
  let publicAgent: string;
  let noOffline: string;
  /** Every token value handed out: none may appear in a log line or an event. */
  const secrets: string[] = [];

  const agent = async (name: string, allowedScopes: string[]): Promise<string> => {
    const id = (
      await admin.post('/api/agents', {
        display_name: name,
        redirect_uris: [REDIRECT],
        allowed_scopes: allowedScopes,
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
    return id;
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
      },
    });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
    serviceId = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: [MAIL, FILES],
      })
    ).json<{ id: string }>().id;
    setId = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const confidentialId = await agent('Confidential', ['mail.read', 'offline_access']);
    confidential = {
      id: confidentialId,
      secret: (await admin.post(`/api/agents/${confidentialId}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    secrets.push(confidential.secret);
    publicAgent = await agent('Public', []);
    noOffline = await agent('No offline access', ['mail.read']);
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker?.stop();
  });

  const clientOf = (id: string): { client: oauth.Client; auth: oauth.ClientAuth } =>
    id === confidential.id
      ? { client: { client_id: id }, auth: oauth.ClientSecretBasic(confidential.secret) }
      : { client: { client_id: id, token_endpoint_auth_method: 'none' }, auth: oauth.None() };

  /** Signs alice in for `clientId` (her grant exists: no consent page) and redeems the code. */
  async function signIn(
    clientId: string,
    scope = 'mail.read offline_access',
    resources: string[] = [MAIL, FILES],
  ): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    for (const resource of resources) url.searchParams.append('resource', resource);
    const redirect = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(redirect.status, redirect.text).toBe(302);
    const { client, auth } = clientOf(clientId);
    const params = oauth.validateAuthResponse(as, client, new URL(redirect.headers.location as string), state);
    const result = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, insecure),
    );
    secrets.push(result.access_token, ...(result.refresh_token === undefined ? [] : [result.refresh_token]));
    return result;
  }

  /** A refresh through oauth4webapi (its response processing included). */
  async function refresh(
    clientId: string,
    token: string,
    parameters?: Record<string, string>,
  ): Promise<oauth.TokenEndpointResponse> {
    const { client, auth } = clientOf(clientId);
    const result = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, token, { ...insecure, additionalParameters: parameters }),
    );
    secrets.push(result.access_token, ...(result.refresh_token === undefined ? [] : [result.refresh_token]));
    return result;
  }

  /** The same refresh as a raw form POST, for refusals (status and body as they are). */
  const refreshRaw = (clientId: string, token: string, extra: Record<string, string> = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: token, ...extra };
    if (clientId === confidential.id)
      headers.authorization = `Basic ${Buffer.from(`${clientId}:${encodeURIComponent(confidential.secret)}`).toString('base64')}`;
    else form.client_id = clientId;
    return http(`${base}/oauth2/token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
  };

  const refusal = async (clientId: string, token: string, extra: Record<string, string> = {}) => {
    const response = await refreshRaw(clientId, token, extra);
    expect(response.headers['cache-control']).toBe('no-store');
    return { status: response.status, body: response.json<{ error: string; error_description: string }>() };
  };

  const events = async (type: string, familyId: string) => {
    await broker.broker.server('enduser').app.get(EventLedger).flush();
    return broker.broker.runtime.database.dataSource.query<
      {
        actor_type: string;
        actor_id: string;
        principal: string;
        agent_id: string;
        outcome: string;
        details: Record<string, unknown>;
      }[]
    >(
      "SELECT actor_type, actor_id, principal, agent_id, outcome, details FROM events WHERE type = $1 AND details->>'family_id' = $2",
      [type, familyId],
    );
  };

  it('advertises offline_access and the refresh_token grant', () => {
    expect(as.scopes_supported).toContain('offline_access');
    expect(as.grant_types_supported).toContain('refresh_token');
  });

  it('issues a refresh token for offline_access and rotates it on every use, the access tokens carrying the family as sid', async () => {
    const first = await signIn(confidential.id);
    expect(first.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.scope).toBe('mail.read offline_access');
    const sid = decodeJwt(first.access_token).sid as string;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);

    clock.advance(HOUR);
    const second = await refresh(confidential.id, first.refresh_token as string);
    expect(second).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'mail.read offline_access' });
    expect(second.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const { payload } = await jwtVerify(second.access_token, createRemoteJWKSet(new URL(as.jwks_uri as string)), {
      issuer: base,
      currentDate: clock.now(),
    });
    expect(payload).toMatchObject({
      sub: ALICE,
      client_id: confidential.id,
      sid,
      aud: [MAIL, FILES],
      scope: 'mail.read offline_access',
    });
    expect(payload.iat).toBe(Math.floor(clock.nowMs() / 1000));

    const third = await refresh(confidential.id, second.refresh_token as string);
    expect(decodeJwt(third.access_token).sid).toBe(sid);

    // The ledger: issue and rotations, by the agent, naming the family and never a token.
    expect(await events('refresh_token.issued', sid)).toEqual([
      {
        actor_type: 'agent',
        actor_id: confidential.id,
        principal: ALICE,
        agent_id: confidential.id,
        outcome: 'success',
        details: { family_id: sid },
      },
    ]);
    expect(await events('refresh_token.rotated', sid)).toHaveLength(2);
  });

  it('issues none without offline_access, and a client not allowed offline_access cannot ask for it', async () => {
    const plain = await signIn(confidential.id, 'mail.read');
    expect(plain.refresh_token).toBeUndefined();
    expect(decodeJwt(plain.access_token).sid).toBeUndefined();

    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      client_id: noOffline,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mail.read offline_access',
      state: 's',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const refused = new URL(
      (await http(url.toString(), { headers: { 'x-remote-user': ALICE } })).headers.location as string,
    );
    expect(refused.searchParams.get('error')).toBe('invalid_scope');
  });

  it('works for a public client identified by client_id alone', async () => {
    const first = await signIn(publicAgent);
    const next = await refresh(publicAgent, first.refresh_token as string);
    expect(decodeJwt(next.access_token)).toMatchObject({ client_id: publicAgent, sub: ALICE });
  });

  it('narrows scope and resource for the access token only; a wider scope or another resource is refused and leaves the token usable', async () => {
    const first = await signIn(confidential.id);
    expect(await refusal(confidential.id, first.refresh_token as string, { scope: 'mail.read mail.send' })).toEqual({
      status: 400,
      body: { error: 'invalid_scope', error_description: 'the requested scope exceeds the scope of the refresh token' },
    });
    expect(
      (await refusal(confidential.id, first.refresh_token as string, { resource: 'https://elsewhere.example.com/mcp' }))
        .body.error,
    ).toBe('invalid_target');
    const narrowed = await refresh(confidential.id, first.refresh_token as string, {
      scope: 'mail.read',
      resource: FILES,
    });
    expect(narrowed.scope).toBe('mail.read');
    expect(decodeJwt(narrowed.access_token)).toMatchObject({ scope: 'mail.read', aud: FILES });
    // RFC 6749 §6: the successor keeps the family's scope and resources.
    const widened = await refresh(confidential.id, narrowed.refresh_token as string);
    expect(decodeJwt(widened.access_token)).toMatchObject({ scope: 'mail.read offline_access', aud: [MAIL, FILES] });
  });

  it('detects reuse: a rotated token presented again ends the whole family, with an event', async () => {
    const first = await signIn(confidential.id);
    const sid = decodeJwt(first.access_token).sid as string;
    const second = await refresh(confidential.id, first.refresh_token as string);
    const introspect = async (token: string) => {
      const { client, auth } = clientOf(confidential.id);
      return (
        await oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, auth, token, insecure),
        )
      ).active;
    };
    expect(await introspect(second.access_token)).toBe(true);
    // Past the reuse grace (5 s by default): the same client presenting it again is a reuse.
    clock.advance(6_000);
    expect(await refusal(confidential.id, first.refresh_token as string)).toEqual({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'the refresh token was already used; its sign-in has been ended',
      },
    });
    // The legitimate holder's current token is ended too (RFC 9700 §4.14.2).
    expect((await refusal(confidential.id, second.refresh_token as string)).body.error).toBe('invalid_grant');
    // The family's access tokens are inactive at once (their sid).
    expect(await introspect(second.access_token)).toBe(false);
    expect(await introspect(second.refresh_token as string)).toBe(false);
    expect(await events('refresh_token.reused', sid)).toEqual([
      expect.objectContaining({ actor_type: 'agent', outcome: 'failure', details: { family_id: sid } }),
    ]);
  });

  it('gives concurrent refreshes of one token by its client the same successor (the reuse grace): one branch, no sign-out', async () => {
    const first = await signIn(publicAgent);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => refreshRaw(publicAgent, first.refresh_token as string)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const successors = new Set(answers.map((a) => a.json<{ refresh_token: string }>().refresh_token));
    expect(successors.size).toBe(1);
    const [successor] = [...successors] as [string];
    secrets.push(successor);
    // One successor was stored: the family did not branch, and it rotates on as usual.
    const sid = decodeJwt(answers[0]?.json<{ access_token: string }>().access_token ?? '').sid as string;
    const rows = await broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM refresh_tokens WHERE family_id = $1',
      [sid],
    );
    expect(rows[0]?.n).toBe(2);
    const third = await refresh(publicAgent, successor);
    secrets.push(third.refresh_token as string);
    // Past the grace, the first token presented again is a reuse: the family ends, its newest token too.
    clock.advance(6_000);
    expect((await refusal(publicAgent, first.refresh_token as string)).body.error).toBe('invalid_grant');
    expect((await refusal(publicAgent, third.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it("ends the families of a service the person's grant no longer delegates, and the rotation itself checks it", async () => {
    const calendarService = (
      await admin.post('/api/services', {
        display_name: 'Calendar',
        client_id: 'c',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: [CALENDAR],
      })
    ).json<{ id: string }>().id;
    const calendarSet = (
      await admin.post('/api/permission-sets', {
        name: 'Calendar',
        service_scopes: [{ service_id: calendarService, scopes: ['calendar.read'] }],
      })
    ).json<{ id: string }>().id;
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Narrowed',
        redirect_uris: [REDIRECT],
        allowed_scopes: [],
        permission_sets: [{ permission_set_id: setId }, { permission_set_id: calendarSet }],
      })
    ).json<{ id: string }>().id;
    const both = { [setId]: [serviceId], [calendarSet]: [calendarService] };
    expect((await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: both })).status).toBe(201);
    const calendar = await signIn(id, 'offline_access', [CALENDAR]);
    const mail = await signIn(id, 'offline_access', [MAIL]);
    const introspect = async (token: string) =>
      (
        await http(`${base}/oauth2/introspect`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, client_id: id }).toString(),
        })
      ).status;
    // A public client may not introspect: the gateway-free check is the refresh itself and the family row.
    expect(await introspect(calendar.refresh_token as string)).toBe(401);
    const familyRevoked = async (token: string) =>
      (
        await broker.broker.runtime.database.dataSource.query<{ revoked: boolean }[]>(
          'SELECT f.revoked_at IS NOT NULL AS revoked FROM refresh_token_families f WHERE f.id = $1',
          [decodeJwt(token).sid],
        )
      )[0]?.revoked;
    expect(await familyRevoked(calendar.access_token)).toBe(false);

    // The person keeps Mail only: the Calendar family ends in the same transaction; the Mail family lives on.
    const narrowed = { [setId]: [serviceId] };
    expect((await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: narrowed })).status).toBe(
      201,
    );
    expect(await familyRevoked(calendar.access_token)).toBe(true);
    expect(await familyRevoked(mail.access_token)).toBe(false);
    expect((await refusal(id, calendar.refresh_token as string)).body.error).toBe('invalid_grant');
    const next = await refresh(id, mail.refresh_token as string);
    expect(decodeJwt(next.access_token).aud).toBe(MAIL);

    // A family the narrowing did not end (its row made live again behind the broker's back) is still refused by the
    // rotation, which checks the delegation itself: no path that changes a grant can forget a family.
    const again = await signIn(id, 'offline_access', [MAIL]);
    await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: both });
    const calendarAgain = await signIn(id, 'offline_access', [CALENDAR]);
    await broker.broker.runtime.database.dataSource.query(
      'UPDATE grant_delegations SET service_id = $1 WHERE service_id = $2 AND grant_id IN (SELECT id FROM grants WHERE agent_id = $3)',
      [serviceId, calendarService, id],
    );
    expect(await refusal(id, calendarAgain.refresh_token as string)).toEqual({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: "the person's grant no longer delegates this refresh token's resources or scopes",
      },
    });
    expect((await refresh(id, again.refresh_token as string)).access_token).toBeTruthy();
  });

  it("refuses another client's refresh token without spending it", async () => {
    const first = await signIn(confidential.id);
    expect(await refusal(publicAgent, first.refresh_token as string)).toEqual({
      status: 400,
      body: {
        error: 'invalid_grant',
        error_description: 'the refresh token is invalid or was issued to another client',
      },
    });
    expect((await refresh(confidential.id, first.refresh_token as string)).access_token).toBeTruthy();
    expect((await refusal(confidential.id, 'not-a-token-we-issued')).body.error).toBe('invalid_grant');
    expect((await refusal(confidential.id, '')).body.error).toBe('invalid_request');
  });

  it('ends when the person revokes the grant (as the console does), and a new grant does not revive it', async () => {
    const id = await agent('Revoked later', []);
    const liveSessions = async () =>
      (await alice.get('/api/consent/agents'))
        .json<{ data: { agent_id: string; live_sessions: number }[] }>()
        .data.find((item) => item.agent_id === id)?.live_sessions;
    expect(await liveSessions()).toBe(0);
    const first = await signIn(id);
    await signIn(id, 'offline_access');
    // The agents page's count: two sign-ins, never a token.
    expect(await liveSessions()).toBe(2);
    expect((await alice.delete(`/api/consent/agents/${id}/grants`)).status).toBe(204);
    expect((await refusal(id, first.refresh_token as string)).body.error).toBe('invalid_grant');
    await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
    expect((await refusal(id, first.refresh_token as string)).body.error).toBe('invalid_grant');
    expect(await liveSessions()).toBe(0);
  });

  it('ends when the grant expires, and stays ended when the grant is given again', async () => {
    const id = (
      await admin.post('/api/agents', {
        display_name: 'Expiring grant',
        redirect_uris: [REDIRECT],
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    await alice.post(`/api/consent/agents/${id}/grants`, {
      granted_permission_sets: { [setId]: [serviceId] },
      valid_until: new Date(clock.nowMs() + 2 * HOUR).toISOString(),
    });
    const first = await signIn(id);
    clock.advance(3 * HOUR);
    expect(await refusal(id, first.refresh_token as string)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'the grant for this client was revoked or has expired' },
    });
    await alice.post(`/api/consent/agents/${id}/grants`, { granted_permission_sets: { [setId]: [serviceId] } });
    expect((await refusal(id, first.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it("ends when the agent's credential is rotated, and when the agent is deleted", async () => {
    const id = await agent('Rotating', []);
    let secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    secrets.push(secret);
    const basic = (value: string) => `Basic ${Buffer.from(`${id}:${encodeURIComponent(value)}`).toString('base64')}`;
    const client: oauth.Client = { client_id: id };
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      client_id: id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'offline_access',
      state: 's',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const params = oauth.validateAuthResponse(
      as,
      client,
      new URL((await http(url.toString(), { headers: { 'x-remote-user': ALICE } })).headers.location as string),
      's',
    );
    const first = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(secret),
        params,
        REDIRECT,
        verifier,
        insecure,
      ),
    );
    secrets.push(first.access_token, first.refresh_token as string);

    secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>().client_secret;
    secrets.push(secret);
    // RFC 7662 §2.2: a refresh token that can never buy a token again (issued under the old secret) is not active.
    const introspected = await http(`${base}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(secret) },
      body: new URLSearchParams({ token: first.refresh_token as string }).toString(),
    });
    expect(introspected.status).toBe(200);
    expect(introspected.json()).toEqual({ active: false });
    const rotated = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(secret) },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token as string,
      }).toString(),
    });
    expect(rotated.status).toBe(400);
    expect(rotated.json()).toEqual({
      error: 'invalid_grant',
      error_description: "the client's credentials changed since the refresh token was issued",
    });

    const second = await signIn(publicAgent);
    await admin.delete(`/api/agents/${publicAgent}`);
    // RFC 6749 §5.2: the client no longer exists, so its authentication fails before the token is looked at.
    expect((await refusal(publicAgent, second.refresh_token as string)).status).toBe(401);
    const rows = await broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM refresh_tokens WHERE agent_id = $1',
      [publicAgent],
    );
    expect(rows[0]?.n).toBe(0);
    publicAgent = await agent('Public again', []);
  });

  it('expires after idle_ttl unused, and a family ends at absolute_ttl however often it is used', async () => {
    const idle = await signIn(confidential.id);
    clock.advance(7 * DAY + 1_000);
    expect((await refusal(confidential.id, idle.refresh_token as string)).body).toEqual({
      error: 'invalid_grant',
      error_description: 'the refresh token is invalid, expired or revoked',
    });

    let current = (await signIn(confidential.id)).refresh_token as string;
    // Used every 6 days (within idle_ttl), on days 6, 12, 18 and 24 ...
    for (let use = 0; use < 4; use += 1) {
      clock.advance(6 * DAY);
      current = (await refresh(confidential.id, current)).refresh_token as string;
    }
    // ... and refused just past day 30, though unused for only 6 days.
    clock.advance(6 * DAY + 1_000);
    expect((await refusal(confidential.id, current)).body.error).toBe('invalid_grant');
  });

  it('purges the rows of ended families (hourly retention job), keeping live ones', async () => {
    const live = await signIn(confidential.id);
    const count = async (condition: string) =>
      (
        await broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM refresh_tokens WHERE ${condition}`,
          [clock.now()],
        )
      )[0]?.n ?? 0;
    const ended = await count("family_expires_at < $1::timestamptz - interval '1 minute'");
    // The months the clock advanced in the tests above ended the families started before them.
    expect(ended).toBeGreaterThan(0);
    expect(await broker.broker.server('enduser').app.get(RefreshTokenRetention).purgeNow()).toBe(ended);
    expect(await count("family_expires_at < $1::timestamptz - interval '1 minute'")).toBe(0);
    expect((await refresh(confidential.id, live.refresh_token as string)).refresh_token).toBeTruthy();
  });

  it('never writes a token or secret to a log line or an event', async () => {
    await broker.broker.server('enduser').app.get(EventLedger).flush();
    const ledger = JSON.stringify(await broker.broker.runtime.database.dataSource.query('SELECT * FROM events'));
    const logs = broker.logs.text;
    for (const secret of secrets.filter((s) => s.length > 0)) {
      expect(logs).not.toContain(secret);
      expect(ledger).not.toContain(secret);
    }
  });
});
