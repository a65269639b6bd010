import { SessionRepository } from '@broker/persistence';
import {
  ApiClient,
  http,
  RefreshGate,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { bindings, EnvelopeCipher } from '@broker/vault';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectThirdParty,
  expireAccessToken as expireStored,
  grantMail,
  registerMailService,
} from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';

/** Tokens the provider's token endpoint answered with, by grant type. */
interface Issued {
  readonly grantType: string;
  readonly accessToken: string | undefined;
  readonly refreshToken: string | undefined;
}

describe.each(testBackends())('token exchange with an expired third-party access token on $name', (backend) => {
  let gateway: GatewayFixture;
  let provider: ThirdPartyProvider;
  let broker: TestBroker;
  let base: string;
  let agent: string;
  let service: string;
  let alice: ApiClient;
  const issued: Issued[] = [];
  let gate: RefreshGate | undefined;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      algorithm: 'RS256',
      gatewaySub: 'gateway',
      // The test provider listens on loopback, which issuer discovery refuses unless allowed.
      config: { third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } } },
    });
    ({ broker, base } = gateway);
    // Records every token answer; a refresh answer waits for the gate when one is set.
    const mail = await registerMailService(new ApiClient(broker.url('admin')), base, (started) => {
      started.provider.use(async (ctx: KoaContextWithOIDC, next) => {
        await next();
        const grantType =
          ctx.path === '/token' ? (ctx.oidc as KoaContextWithOIDC['oidc'] | undefined)?.params?.grant_type : undefined;
        if (typeof grantType !== 'string') return;
        const body = (ctx.body ?? {}) as { access_token?: string; refresh_token?: string };
        issued.push({ grantType, accessToken: body.access_token, refreshToken: body.refresh_token });
        if (grantType === 'refresh_token' && gate !== undefined) await gate.hold();
      });
    });
    ({ provider, service, agent } = mail);
    alice = new ApiClient(base, ALICE);
    await grantMail(base, ALICE, mail);
    await connect();
  });

  afterAll(async () => {
    await gateway?.stop();
    await provider?.stop();
  });

  /** The whole connect flow (a reconnect when a session exists); resolves when the broker has answered the callback. */
  async function connect(): Promise<void> {
    await connectThirdParty(base, ALICE, service);
  }

  async function exchange(): Promise<{
    status: number;
    body: { access_token?: string; error?: string; error_uri?: string };
    fields: Record<string, string>;
  }> {
    const fields = {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await gateway.assertion({ jti: undefined }),
      subject_token: await gateway.subjectToken(ALICE, agent),
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: 'https://mail.example.com',
    };
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    return { status: response.status, body: response.json(), fields };
  }

  function expireAccessToken(): Promise<void> {
    return expireStored(broker, ALICE, service);
  }

  /** The stored session's tokens, decrypted. */
  async function stored(): Promise<{ accessToken: string; refreshToken: string; needsReauthentication: boolean }> {
    const app = broker.broker.server('enduser').app;
    const record = await app.get(SessionRepository).find(ALICE, service);
    if (record === undefined) throw new Error('no stored session');
    const cipher = app.get(EnvelopeCipher);
    return {
      accessToken: cipher
        .decrypt(record.accessTokenEnvelope, bindings.sessionToken(service, ALICE, 'access_token'))
        .toString(),
      refreshToken: cipher
        .decrypt(record.refreshTokenEnvelope as Buffer, bindings.sessionToken(service, ALICE, 'refresh_token'))
        .toString(),
      needsReauthentication: record.needsReauthentication === true,
    };
  }

  /** Uses (and so rotates away) the stored refresh token behind the broker's back. */
  async function stealRefreshToken(): Promise<string> {
    const { refreshToken } = await stored();
    const stolen = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${provider.clientId}:${provider.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    });
    expect(stolen.status).toBe(200);
    return refreshToken;
  }

  /**
   * Reconnects while a refresh is held at the provider. PGlite: the reconnect completes.
   * PostgreSQL: the refresh holds the session's row lock, so the reconnect's write waits
   * for it; returns once that write is waiting on the lock (the reconnect still pending).
   */
  async function reconnectDuringRefresh(): Promise<{ reconnected: Promise<void> }> {
    const reconnected = connect();
    if (backend.name === 'pglite') {
      await reconnected;
      return { reconnected };
    }
    const database = broker.broker.runtime.database.dataSource;
    for (;;) {
      const [waiting] = await database.query<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if ((waiting?.n ?? 0) > 0) return { reconnected };
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('refreshes it transparently (one provider refresh) and returns the new token; no token reaches the log', async () => {
    const before = await exchange();
    expect(before.status).toBe(200);
    await expireAccessToken();
    const refreshes = provider.refreshes();
    const after = await exchange();
    expect(after.status).toBe(200);
    expect(provider.refreshes()).toBe(refreshes + 1);
    expect(after.body.access_token).not.toBe(before.body.access_token);
    // The refreshed token is now served without another refresh.
    expect((await exchange()).body.access_token).toBe(after.body.access_token);
    expect(provider.refreshes()).toBe(refreshes + 1);
    expect(
      broker.logs.leaked([
        before.body.access_token as string,
        after.body.access_token as string,
        after.fields.client_assertion as string,
        after.fields.subject_token as string,
        provider.clientSecret,
      ]),
    ).toEqual([]);
  });

  it('a refresh token the provider refused: 400 invalid_grant with the reconnect error_uri, the provider asked once (not on every exchange) until the person reconnects', async () => {
    await connect();
    const dead = await stealRefreshToken();
    await expireAccessToken();
    const [refused, refreshes] = [provider.refusedRefreshes(), provider.refreshes()];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await exchange();
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        error: 'invalid_grant',
        error_uri: `${base}/api/third-party/${service}/oauth2/authorize`,
      });
    }
    // The refusal is remembered (committed): the dead token went to the provider once.
    expect(provider.refusedRefreshes()).toBe(refused + 1);
    expect(provider.refreshes()).toBe(refreshes);
    expect(
      (await alice.get(`/api/third-party/${service}/session`)).json<{
        data: { session: { needs_reauthentication: boolean } };
      }>().data.session.needs_reauthentication,
    ).toBe(true);
    // Reconnecting clears the mark; the new session is served without a refresh.
    await connect();
    const reconnected = await exchange();
    expect(reconnected.status).toBe(200);
    expect(reconnected.body.access_token).toBe((await stored()).accessToken);
    expect(provider.refusedRefreshes()).toBe(refused + 1);
    expect(
      (await alice.get(`/api/third-party/${service}/session`)).json<{
        data: { session: { needs_reauthentication: boolean } };
      }>().data.session.needs_reauthentication,
    ).toBe(false);
    expect(broker.logs.leaked([dead, reconnected.body.access_token as string])).toEqual([]);
  });

  it('a reconnect that lands while a refresh is in flight is kept: the refresh answer never overwrites it', async () => {
    await connect();
    await expireAccessToken();
    gate = new RefreshGate();
    try {
      const refreshing = exchange();
      await gate.arrived;
      const { reconnected } = await reconnectDuringRefresh();
      gate.release();
      const [response] = await Promise.all([refreshing, reconnected]);
      expect(response.status).toBe(200);
    } finally {
      gate.release();
      gate = undefined;
    }
    const byCode = issued.filter((i) => i.grantType === 'authorization_code').at(-1);
    const byRefresh = issued.filter((i) => i.grantType === 'refresh_token').at(-1);
    const session = await stored();
    expect(session.accessToken).not.toBe(byRefresh?.accessToken);
    expect(session).toEqual({
      accessToken: byCode?.accessToken,
      refreshToken: byCode?.refreshToken,
      needsReauthentication: false,
    });
    // And the gateway is served the reconnected session.
    expect((await exchange()).body.access_token).toBe(session.accessToken);
  });

  it('a refusal that lands after a reconnect does not mark the reconnected session', async () => {
    await connect();
    await stealRefreshToken();
    await expireAccessToken();
    const refused = provider.refusedRefreshes();
    gate = new RefreshGate();
    try {
      const refreshing = exchange();
      await gate.arrived;
      const { reconnected } = await reconnectDuringRefresh();
      gate.release();
      await Promise.all([refreshing, reconnected]);
    } finally {
      gate.release();
      gate = undefined;
    }
    expect(provider.refusedRefreshes()).toBe(refused + 1);
    const byCode = issued.filter((i) => i.grantType === 'authorization_code').at(-1);
    expect(await stored()).toEqual({
      accessToken: byCode?.accessToken,
      refreshToken: byCode?.refreshToken,
      needsReauthentication: false,
    });
    const after = await exchange();
    expect(after.status).toBe(200);
    expect(after.body.access_token).toBe(byCode?.accessToken);
  });
});
