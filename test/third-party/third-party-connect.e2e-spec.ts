import { ServiceRepository, SessionRepository } from '@broker/persistence';
import {
  ApiClient,
  completeAuthorization,
  FrozenClock,
  freePort,
  http,
  startTestBroker,
  startThirdPartyProvider,
  testBackends,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { bindings, EnvelopeCipher, TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireAccessToken } from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

describe.each(testBackends())('third-party connections on $name', (backend) => {
  let broker: TestBroker;
  let provider: ThirdPartyProvider;
  let admin: ApiClient;
  let alice: ApiClient;
  let publicUrl: string;
  let serviceId: string;
  let otherServiceId: string;
  const clock = new FrozenClock(new Date());

  beforeAll(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: publicUrl, consent_ui_url: 'https://consent.example.com' } },
        // The test provider listens on loopback, which issuer discovery refuses unless allowed.
        third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
      },
    });
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(publicUrl, ALICE);
    // The callback URL contains the service id, so the service is registered first and the provider learns it after.
    const placeholder = 'https://placeholder.example.com';
    serviceId = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'pending',
        client_secret: 'pending',
        issuer_uri: placeholder,
        authorization_endpoint: `${placeholder}/a`,
        token_endpoint: `${placeholder}/t`,
        scopes: [{ scope: 'mail.read', description: 'Read mail' }],
        protected_resources: ['https://mail.example.com/api'],
      })
    ).json<{ id: string }>().id;
    otherServiceId = (
      await admin.post('/api/services', {
        display_name: 'Files',
        client_id: 'files',
        issuer_uri: placeholder,
        authorization_endpoint: `${placeholder}/a`,
        token_endpoint: `${placeholder}/t`,
        protected_resources: ['https://files.example.com/api'],
      })
    ).json<{ id: string }>().id;
    provider = await startThirdPartyProvider({
      redirectUris: [`${publicUrl}/api/third-party/${serviceId}/oauth2/callback`],
      scopes: ['mail.read', 'mail.send'],
    });
    const put = await admin.put(`/api/services/${serviceId}`, {
      display_name: 'Mail',
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      issuer_uri: provider.issuer,
      scopes: [{ scope: 'mail.read', description: 'Read mail' }],
      protected_resources: ['https://mail.example.com/api'],
    });
    expect(put.status).toBe(200);
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.send', 'mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const agent = (
      await admin.post('/api/agents', { display_name: 'Mail Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    await alice.post(`/api/consent/agents/${agent}/grants`, { granted_permission_sets: { [set]: [serviceId] } });
  });

  afterAll(async () => {
    await broker.stop();
    await provider.stop();
  });

  /** Runs the whole connect flow for `client`; returns the broker's final redirect. */
  async function connect(client: ApiClient, redirectUri = `${publicUrl}/done`): Promise<string> {
    const start = await client.get(
      `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(redirectUri)}`,
    );
    expect(start.status).toBe(302);
    const callback = await completeAuthorization(
      start.headers.location as string,
      `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`,
    );
    const finish = await http(callback, { headers: { 'x-remote-user': client.principal as string } });
    expect(finish.status).toBe(302);
    return finish.headers.location as string;
  }

  it('connects end to end: PKCE authorize, provider login and consent, callback, tokens sealed', async () => {
    const start = await alice.get(
      `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${publicUrl}/done`)}`,
    );
    expect(start.status).toBe(302);
    const location = new URL(start.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.issuer}/auth`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`,
      scope: 'mail.read mail.send',
      code_challenge_method: 'S256',
    });
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('state')?.split('.')).toHaveLength(5);

    expect(await connect(alice)).toBe(`${publicUrl}/done?success=true&service_id=${serviceId}`);
    const vault = broker.broker.server('enduser').app.get(TokenVault);
    const token = await vault.getUsableToken(ALICE, serviceId);
    expect(token.accessToken.length).toBeGreaterThan(10);
    expect(token.tokenType).toBe('Bearer');
  });

  it('refuses a redirect_uri on another host with 400 invalid_redirect_uri (the Host header is not trusted)', async () => {
    for (const target of ['https://evil.example.com/done', 'http://127.0.0.1:1/done', 'not a url']) {
      const response = await http(
        `${publicUrl}/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(target)}`,
        { headers: { 'x-remote-user': ALICE, host: 'evil.example.com', 'x-forwarded-host': 'evil.example.com' } },
      );
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('invalid_redirect_uri');
    }
    expect(
      (
        await alice.get(
          `/api/third-party/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/authorize?redirect_uri=${encodeURIComponent(`${publicUrl}/x`)}`,
        )
      ).status,
    ).toBe(404);
  });

  it('refuses an authorize without redirect_uri (required: 400 bad request naming it) or with an empty one, never a Location', async () => {
    const missing = await alice.get(`/api/third-party/${serviceId}/oauth2/authorize`);
    expect(missing.status).toBe(400);
    expect(missing.headers.location).toBeUndefined();
    const body = missing.json<{ error: string; details: { field: string }[] }>();
    expect(body.error).toBe('bad request');
    expect(body.details.map((issue) => issue.field)).toEqual(['redirect_uri']);
    const empty = await alice.get(`/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=`);
    expect(empty.status).toBe(400);
    expect(empty.headers.location).toBeUndefined();
    expect(empty.json<{ error: string }>().error).toBe('invalid_redirect_uri');
  });

  describe('callback failures redirect (to the sessions page without a verified state) and store nothing', () => {
    const failurePage = 'https://consent.example.com/connections';

    async function providerCallback(client: ApiClient): Promise<URL> {
      const start = await client.get(
        `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${publicUrl}/done`)}`,
      );
      return new URL(
        await completeAuthorization(
          start.headers.location as string,
          `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`,
        ),
      );
    }

    async function finish(url: URL, principal: string | null): Promise<URL> {
      const response = await http(url.toString(), { headers: principal ? { 'x-remote-user': principal } : {} });
      expect(response.status).toBe(302);
      return new URL(response.headers.location as string);
    }

    it("another principal's state: error=forbidden, nothing stored", async () => {
      const bob = alice.as(BOB);
      const callback = await providerCallback(alice);
      const landed = await finish(callback, BOB);
      expect(`${landed.origin}${landed.pathname}`).toBe(failurePage);
      expect(landed.searchParams.get('error')).toBe('forbidden');
      expect((await bob.get(`/api/third-party/${serviceId}/session`)).status).toBe(404);
      // Without any principal, the same: a redirect, never a JSON 401.
      expect((await finish(callback, null)).searchParams.get('error')).toBe('forbidden');
    });

    it('a tampered state: error=invalid_state', async () => {
      const callback = await providerCallback(alice);
      const state = callback.searchParams.get('state') as string;
      callback.searchParams.set('state', `${state.slice(0, -5)}AAAAA`);
      const landed = await finish(callback, ALICE);
      expect(landed.searchParams.get('error')).toBe('invalid_state');
      expect(landed.searchParams.get('error_description')).toBe(
        'the connection attempt is invalid or has expired: start it again',
      );
    });

    it('an expired state (past third_party_oauth2.state_token_ttl): error=invalid_state, nothing stored', async () => {
      const bob = alice.as(BOB);
      const start = await bob.get(
        `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${publicUrl}/done`)}`,
      );
      const callback = await completeAuthorization(
        start.headers.location as string,
        `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`,
      );
      clock.advance(10 * 60_000 + 1_000);
      const landed = await finish(new URL(callback), BOB);
      expect(landed.searchParams.get('error')).toBe('invalid_state');
      expect((await bob.get(`/api/third-party/${serviceId}/session`)).status).toBe(404);
    });

    it('a state for another service: error=service_id_mismatch', async () => {
      const callback = await providerCallback(alice);
      const elsewhere = new URL(callback.toString().replace(serviceId, otherServiceId));
      expect((await finish(elsewhere, ALICE)).searchParams.get('error')).toBe('service_id_mismatch');
    });

    it("a provider error with a valid state: its code, sanitised and capped; the broker's words, never the provider's description", async () => {
      const url = await providerCallback(alice);
      url.searchParams.delete('code');
      url.searchParams.set('error', 'access_denied');
      url.searchParams.set('error_description', `<script>alert(1)</script>\n${'x'.repeat(500)}`);
      const landed = await finish(url, ALICE);
      expect(landed.searchParams.get('error')).toBe('access_denied');
      const description = landed.searchParams.get('error_description') as string;
      expect(description).toBe('the connection was cancelled at the provider');
      const odd = await providerCallback(alice);
      odd.searchParams.delete('code');
      odd.searchParams.set('error', `consent_required\n${'y'.repeat(100)}`);
      odd.searchParams.set('error_description', 'Call +1 555 0100');
      const other = await finish(odd, ALICE);
      expect((other.searchParams.get('error') as string).length).toBeLessThanOrEqual(64);
      expect(other.searchParams.get('error')).not.toMatch(/[\n\r]/);
      expect(other.toString()).not.toContain('555');
    });

    describe('with a verified state, a failure goes back to the page that started the connection (a consent page keeps its request)', () => {
      const started = () => `${publicUrl}/done`;

      it("the person cancels at the provider: error=access_denied, service_id, the broker's words", async () => {
        const url = await providerCallback(alice);
        url.searchParams.delete('code');
        url.searchParams.set('error', 'access_denied');
        url.searchParams.set('error_description', 'End-User aborted interaction');
        const landed = await finish(url, ALICE);
        expect(`${landed.origin}${landed.pathname}`).toBe(started());
        expect(Object.fromEntries(landed.searchParams)).toEqual({
          error: 'access_denied',
          error_description: 'the connection was cancelled at the provider',
          service_id: serviceId,
        });
        expect(broker.logs.leaked(['End-User aborted interaction'])).toEqual([]);
      });

      it('the provider refuses the code (invalid_grant): error=token_exchange_failed', async () => {
        const callback = await providerCallback(alice);
        callback.searchParams.set('code', 'not-a-real-code');
        const landed = await finish(callback, ALICE);
        expect(`${landed.origin}${landed.pathname}`).toBe(started());
        expect(landed.searchParams.get('error')).toBe('token_exchange_failed');
        expect(landed.searchParams.get('service_id')).toBe(serviceId);
      });

      it('the token endpoint is unreachable (connection refused): error=provider_unreachable, nothing stored', async () => {
        const bob = alice.as(BOB);
        const callback = await providerCallback(bob);
        const service = (await broker.broker.server('enduser').app.get(ServiceRepository).findById(serviceId))!;
        await broker.broker.runtime.database.dataSource.query(
          "UPDATE services SET token_endpoint = 'http://127.0.0.1:9/token' WHERE id = $1",
          [serviceId],
        );
        await broker.broker.runtime.database.settleNotifications();
        try {
          const landed = await finish(callback, BOB);
          expect(`${landed.origin}${landed.pathname}`).toBe(started());
          expect(landed.searchParams.get('error')).toBe('provider_unreachable');
          expect(landed.searchParams.get('error_description')).toBe('the provider could not be reached');
          expect((await bob.get(`/api/third-party/${serviceId}/session`)).status).toBe(404);
        } finally {
          await broker.broker.runtime.database.dataSource.query(
            'UPDATE services SET token_endpoint = $2 WHERE id = $1',
            [serviceId, service.tokenEndpoint],
          );
          await broker.broker.runtime.database.settleNotifications();
        }
      });

      it('the broker fails on its side (storing the tokens): error=broker_error', async () => {
        const vault = broker.broker.server('enduser').app.get(TokenVault);
        const store = vault.store.bind(vault);
        const callback = await providerCallback(alice);
        vault.store = () => Promise.reject(new Error('the database is gone'));
        try {
          const landed = await finish(callback, ALICE);
          expect(`${landed.origin}${landed.pathname}`).toBe(started());
          expect(landed.searchParams.get('error')).toBe('broker_error');
          expect(landed.searchParams.get('error_description')).toBe('the broker could not complete the connection');
        } finally {
          vault.store = store;
        }
      });
    });

    describe('a provider error is believed only after the state is verified', () => {
      const planted = 'Your account is locked: call +1 555 0100';
      const cases: [string, () => Promise<[URL, string | null]>, string][] = [
        [
          'no state',
          () => Promise.resolve([new URL(`${publicUrl}/api/third-party/${serviceId}/oauth2/callback`), ALICE]),
          'invalid_state',
        ],
        [
          'a forged state',
          () =>
            Promise.resolve([
              new URL(
                `${publicUrl}/api/third-party/${serviceId}/oauth2/callback?state=eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAAA.BBBB.CCCC`,
              ),
              ALICE,
            ]),
          'invalid_state',
        ],
        [
          'a tampered state',
          async () => {
            const url = await providerCallback(alice);
            url.searchParams.set('state', `${(url.searchParams.get('state') as string).slice(0, -5)}AAAAA`);
            return [url, ALICE];
          },
          'invalid_state',
        ],
        [
          'an expired state',
          async () => {
            const url = await providerCallback(alice);
            clock.advance(10 * 60_000 + 1_000);
            return [url, ALICE];
          },
          'invalid_state',
        ],
        ["another principal's state", async () => [await providerCallback(alice), BOB], 'forbidden'],
        [
          'a state for another service',
          async () => [new URL((await providerCallback(alice)).toString().replace(serviceId, otherServiceId)), ALICE],
          'service_id_mismatch',
        ],
      ];
      for (const [name, callback, code] of cases) {
        it(`${name} with error=… → error=${code}, the provider's text never shown`, async () => {
          const [url, principal] = await callback();
          url.searchParams.delete('code');
          url.searchParams.set('error', 'account_locked');
          url.searchParams.set('error_description', planted);
          const landed = await finish(url, principal);
          expect(`${landed.origin}${landed.pathname}`).toBe(failurePage);
          expect(landed.searchParams.get('error')).toBe(code);
          expect(landed.toString()).not.toContain('account_locked');
          expect(landed.searchParams.get('error_description')).not.toContain('locked');
        });
      }
    });

    it('a code the provider refuses: error=token_exchange_failed', async () => {
      const callback = await providerCallback(alice);
      callback.searchParams.set('code', 'not-a-real-code');
      expect((await finish(callback, ALICE)).searchParams.get('error')).toBe('token_exchange_failed');
    });
  });

  describe('sessions', () => {
    it("lists every configured service, with the caller's session or null", async () => {
      await connect(alice);
      const list = (await alice.get('/api/third-party/sessions')).json<{
        data: { service: { id: string }; session: Record<string, unknown> | null }[];
      }>().data;
      expect(list.map((item) => item.service.id).sort()).toEqual([serviceId, otherServiceId].sort());
      expect(list.find((item) => item.service.id === otherServiceId)?.session).toBeNull();
      const session = list.find((item) => item.service.id === serviceId)?.session as Record<string, unknown>;
      expect(session).toMatchObject({
        is_expired: false,
        has_refresh_token: true,
        needs_reauthentication: false,
        dependent_agent_count: 1,
        is_encrypted: true,
      });
      expect(Object.keys(session).sort()).toEqual(
        [
          'access_token_expires_at',
          'dependent_agent_count',
          'has_refresh_token',
          'initiated_at',
          'is_encrypted',
          'is_expired',
          'needs_reauthentication',
          'refresh_token_expires_at',
          'scope',
          'session_id',
        ].sort(),
      );
      expect(list.find((item) => item.service.id === serviceId)?.service).toEqual({
        id: serviceId,
        display_name: 'Mail',
        logo_url: null,
        scopes: [{ scope: 'mail.read', description: 'Read mail' }],
      });
      // Another user: no session, no dependents.
      expect(
        (await alice.as(BOB).get('/api/third-party/sessions'))
          .json<{ data: { session: unknown }[] }>()
          .data.every((item) => item.session === null),
      ).toBe(true);
    });

    it('shows the detail with dependent agents, and the affected agents', async () => {
      const detail = await alice.get(`/api/third-party/${serviceId}/session`);
      expect(detail.status).toBe(200);
      expect(detail.json<{ data: { dependent_agents: unknown } }>().data.dependent_agents).toEqual([
        { agent_id: expect.any(String) as unknown, display_name: 'Mail Agent' },
      ]);
      expect((await alice.get(`/api/third-party/${serviceId}/session/affected-agents`)).json()).toEqual({
        data: { affected_agents: [{ agent_id: expect.any(String) as unknown, display_name: 'Mail Agent' }] },
      });
      expect((await alice.get(`/api/third-party/${otherServiceId}/session`)).status).toBe(404);
      expect((await alice.get('/api/third-party/nope/session')).json<{ error: string }>().error).toBe('bad request');
    });

    it('reconnecting replaces the session in place', async () => {
      const before = (await alice.get(`/api/third-party/${serviceId}/session`)).json<{
        data: { session: { session_id: string } };
      }>().data.session.session_id;
      await connect(alice);
      const rows = await broker.broker.runtime.database.dataSource.query<{ id: string }[]>(
        'SELECT id FROM third_party_sessions WHERE principal = $1 AND service_id = $2',
        [ALICE, serviceId],
      );
      expect(rows).toEqual([{ id: before }]);
    });

    it("never stores or logs the provider's tokens in plaintext", async () => {
      await connect(alice);
      const vault = broker.broker.server('enduser').app.get(TokenVault);
      const access = (await vault.getUsableToken(ALICE, serviceId)).accessToken;
      const record = await broker.broker.server('enduser').app.get(SessionRepository).find(ALICE, serviceId);
      const cipher = broker.broker.server('enduser').app.get(EnvelopeCipher);
      const refresh = cipher
        .decrypt(record?.refreshTokenEnvelope as Buffer, bindings.sessionToken(serviceId, ALICE, 'refresh_token'))
        .toString();
      const rows = await broker.broker.runtime.database.dataSource.query<{ row: string }[]>(
        'SELECT row_to_json(t)::text AS row FROM third_party_sessions t',
      );
      const dump = rows.map((r) => r.row).join('\n');
      for (const secret of [access, refresh, provider.clientSecret]) {
        expect(dump).not.toContain(secret);
        expect(dump).not.toContain(Buffer.from(secret).toString('hex'));
      }
      expect(broker.logs.leaked([access, refresh, provider.clientSecret])).toEqual([]);
    });

    it('forced refresh: new access token, rotated refresh token (200); 404 without a session', async () => {
      await connect(alice);
      const vault = broker.broker.server('enduser').app.get(TokenVault);
      const before = (await vault.getUsableToken(ALICE, serviceId)).accessToken;
      const refreshesBefore = provider.refreshes();
      const response = await alice.post(`/api/third-party/${serviceId}/session/refresh`);
      expect(response.status).toBe(200);
      expect(response.json<{ data: { has_refresh_token: boolean } }>().data.has_refresh_token).toBe(true);
      expect(provider.refreshes()).toBe(refreshesBefore + 1);
      expect((await vault.getUsableToken(ALICE, serviceId)).accessToken).not.toBe(before);
      // The rotated refresh token works again.
      expect((await alice.post(`/api/third-party/${serviceId}/session/refresh`)).status).toBe(200);
      expect((await alice.as(BOB).post(`/api/third-party/${serviceId}/session/refresh`)).status).toBe(404);
    });

    it('refreshes an expired access token once for 50 concurrent callers, all getting the new token', async () => {
      await connect(alice);
      await expireAccessToken(broker, ALICE, serviceId);
      const vault = broker.broker.server('enduser').app.get(TokenVault);
      const refreshesBefore = provider.refreshes();
      const tokens = await Promise.all(Array.from({ length: 50 }, () => vault.getUsableToken(ALICE, serviceId)));
      expect(provider.refreshes()).toBe(refreshesBefore + 1);
      expect(provider.refusedRefreshes()).toBe(0);
      expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
      expect((tokens[0]?.expiresAt as Date).getTime()).toBeGreaterThan(Date.now());
    });

    it('409 refresh_unavailable without a refresh token', async () => {
      await connect(alice);
      await broker.broker.runtime.database.dataSource.query(
        'UPDATE third_party_sessions SET refresh_token_envelope = NULL WHERE principal = $1 AND service_id = $2',
        [ALICE, serviceId],
      );
      // Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
      await broker.broker.runtime.database.settleNotifications();
      const response = await alice.post(`/api/third-party/${serviceId}/session/refresh`);
      expect(response.status).toBe(409);
      expect(response.json<{ error: string }>().error).toBe('refresh_unavailable');
    });

    it('502 refresh_failed when the provider is unreachable, tokens untouched', async () => {
      await connect(alice);
      const before = await broker.broker.server('enduser').app.get(SessionRepository).find(ALICE, serviceId);
      const services = broker.broker.server('enduser').app.get(ServiceRepository);
      const service = (await services.findById(serviceId))!;
      await broker.broker.runtime.database.dataSource.query(
        "UPDATE services SET token_endpoint = 'http://127.0.0.1:9/token' WHERE id = $1",
        [serviceId],
      );
      try {
        const response = await alice.post(`/api/third-party/${serviceId}/session/refresh`);
        expect(response.status).toBe(502);
        expect(response.json<{ error: string }>().error).toBe('refresh_failed');
        const after = await broker.broker.server('enduser').app.get(SessionRepository).find(ALICE, serviceId);
        expect(after?.accessTokenEnvelope.equals(before?.accessTokenEnvelope as Buffer)).toBe(true);
        expect(after?.refreshTokenEnvelope?.equals(before?.refreshTokenEnvelope as Buffer)).toBe(true);
      } finally {
        await broker.broker.runtime.database.dataSource.query('UPDATE services SET token_endpoint = $2 WHERE id = $1', [
          serviceId,
          service.tokenEndpoint,
        ]);
      }
    });

    it('marks the session for re-authentication when the provider answers invalid_grant', async () => {
      await connect(alice);
      const cipher = broker.broker.server('enduser').app.get(EnvelopeCipher);
      const record = await broker.broker.server('enduser').app.get(SessionRepository).find(ALICE, serviceId);
      const refresh = cipher
        .decrypt(record?.refreshTokenEnvelope as Buffer, bindings.sessionToken(serviceId, ALICE, 'refresh_token'))
        .toString();
      // Someone else uses (and so rotates away) the stored refresh token.
      const stolen = await fetch(`${provider.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${provider.clientId}:${provider.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh }),
      });
      expect(stolen.status).toBe(200);
      const response = await alice.post(`/api/third-party/${serviceId}/session/refresh`);
      expect(response.status).toBe(502);
      const session = (await alice.get(`/api/third-party/${serviceId}/session`)).json<{
        data: { session: { needs_reauthentication: boolean } };
      }>().data.session;
      expect(session.needs_reauthentication).toBe(true);
      await expect(
        broker.broker.server('enduser').app.get(TokenVault).getUsableToken(ALICE, serviceId),
      ).rejects.toMatchObject({ code: 'reauthentication_required' });
      // Reconnecting clears it.
      await connect(alice);
      expect(
        (await alice.get(`/api/third-party/${serviceId}/session`)).json<{
          data: { session: { needs_reauthentication: boolean } };
        }>().data.session.needs_reauthentication,
      ).toBe(false);
    });

    it('DELETE removes the stored tokens, returns the affected agents, keeps grants; a racing refresh never resurrects it', async () => {
      await connect(alice);
      const [refresh, removed] = await Promise.all([
        alice.post(`/api/third-party/${serviceId}/session/refresh`),
        alice.delete(`/api/third-party/${serviceId}/session`),
      ]);
      expect([200, 404]).toContain(refresh.status);
      expect(removed.status).toBe(200);
      expect(removed.json()).toEqual({
        data: {
          terminated: true,
          affected_agents: [{ agent_id: expect.any(String) as unknown, display_name: 'Mail Agent' }],
        },
      });
      expect((await alice.get(`/api/third-party/${serviceId}/session`)).status).toBe(404);
      const rows = await broker.broker.runtime.database.dataSource.query<unknown[]>(
        'SELECT 1 FROM third_party_sessions WHERE principal = $1',
        [ALICE],
      );
      expect(rows).toEqual([]);
      expect((await alice.get('/api/consent/agents')).json<{ data: unknown[] }>().data).toHaveLength(1);
      expect((await alice.delete(`/api/third-party/${serviceId}/session`)).status).toBe(404);
      await expect(
        broker.broker.server('enduser').app.get(TokenVault).getUsableToken(ALICE, serviceId),
      ).rejects.toMatchObject({ code: 'no_session' });
    });
  });
});
