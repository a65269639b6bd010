import { fork } from 'node:child_process';
import { SessionRepository } from '@broker/persistence';
import {
  eventually,
  ApiClient,
  createPostgresDatabase,
  FrozenClock,
  http,
  postgresServerUrl,
  RefreshGate,
  startGatewayFixture,
  startTestBroker,
  testBackends,
  testKey,
  type GatewayFixture,
  type LogCapture,
  type TestBroker,
  type TestBackend,
  type ThirdPartyProvider,
} from '@broker/testing';
import { bindings, EnvelopeCipher, ProactiveRefreshSweeper } from '@broker/vault';
import type { Clock } from '@broker/domain';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, grantMail, registerMailService, useRefreshTokenElsewhere } from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

interface ProviderControl {
  /** Provider /token requests answered with `failWith` so far. */
  failedTokenRequests: number;
  failWith: number | undefined;
  gate: RefreshGate | undefined;
}

/**
 * A broker (both servers) trusting a gateway, oidc-provider as the third-party "Mail"
 * service, an agent delegating Mail, and helpers to connect principals (with or without a
 * grant), make their sessions due and read them back.
 */
interface MailFixture {
  readonly gateway: GatewayFixture;
  readonly provider: ThirdPartyProvider;
  readonly service: string;
  readonly agent: string;
  readonly sweeper: ProactiveRefreshSweeper;
  /** What the provider does: `failWith` a status for every /token request (counted), or hold the next refresh at `gate`. */
  readonly control: ProviderControl;
  connect(principal: string, options?: { grant?: boolean }): Promise<void>;
  /** Makes the sessions due: expiring within the window, written an hour before (`now`: the broker's clock), no lease. */
  makeDue(principals: readonly string[], now?: Date): Promise<void>;
  stored(principal: string): Promise<{
    accessToken: string;
    refreshToken: string;
    expiresAt: Date | null;
    needsReauthentication: boolean;
    version: number;
  }>;
  exchange(principal: string): Promise<{ status: number; body: { access_token?: string; error?: string } }>;
  /** Uses (and so rotates away) the principal's stored refresh token behind the broker's back. */
  revokeRefreshToken(principal: string): Promise<void>;
  stop(): Promise<void>;
}

/** The broker's config for `proactive` (the test provider listens on loopback, which issuer discovery refuses unless allowed). */
function brokerConfig(proactive: Record<string, unknown>, keys: Record<string, unknown> = {}): Record<string, unknown> {
  const thirdParty = (keys.third_party_oauth2 ?? {}) as Record<string, unknown>;
  return {
    ...keys,
    third_party_oauth2: { ...thirdParty, discovery: { allowed_networks: ['127.0.0.0/8'] } },
    token_refresh: { proactive: { enabled: true, ...proactive } },
  };
}

async function startMailFixture(
  backend: TestBackend,
  config: Record<string, unknown>,
  clock?: Clock,
): Promise<MailFixture> {
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    backend,
    clock,
    algorithm: 'RS256',
    gatewaySub: 'gateway',
    config,
  });
  const { broker, base } = gateway;
  captures.push(broker.logs);
  const state: ProviderControl = { failedTokenRequests: 0, failWith: undefined, gate: undefined };
  // An outage while `failWith` is set, and a gate holding the next refresh answer when one is set.
  const mail = await registerMailService(new ApiClient(broker.url('admin')), base, (provider) => {
    provider.provider.use(async (ctx: KoaContextWithOIDC, next) => {
      if (ctx.path === '/token' && state.failWith !== undefined) {
        state.failedTokenRequests += 1;
        ctx.status = state.failWith;
        ctx.body = { error: 'temporarily_unavailable' };
        return;
      }
      await next();
      const grantType =
        ctx.path === '/token' ? (ctx.oidc as KoaContextWithOIDC['oidc'] | undefined)?.params?.grant_type : undefined;
      const gate = state.gate;
      if (grantType === 'refresh_token' && gate !== undefined) {
        state.gate = undefined;
        await gate.hold();
      }
    });
  });
  const { provider, service, agent } = mail;
  const app = broker.broker.server('enduser').app;
  const database = broker.broker.runtime.database.dataSource;

  const fixture: MailFixture = {
    gateway,
    provider,
    service,
    agent,
    sweeper: app.get(ProactiveRefreshSweeper),
    control: state,
    async connect(principal, options = {}) {
      if (options.grant !== false) expect((await grantMail(base, principal, mail)).status).toBeLessThan(300);
      await connectThirdParty(base, principal, service);
    },
    async makeDue(principals, now) {
      const at = now ?? new Date();
      await database.query(
        'UPDATE third_party_sessions SET access_token_expires_at = $1, updated_at = $2, refresh_claimed_until = NULL WHERE service_id = $3 AND principal = ANY($4)',
        [new Date(at.getTime() + 60_000), new Date(at.getTime() - 3_600_000), service, principals],
      );
    },
    async stored(principal) {
      const record = await app.get(SessionRepository).find(principal, service);
      if (record === undefined) throw new Error('no stored session');
      const cipher = app.get(EnvelopeCipher);
      return {
        accessToken: cipher
          .decrypt(record.accessTokenEnvelope, bindings.sessionToken(service, principal, 'access_token'))
          .toString(),
        refreshToken: cipher
          .decrypt(record.refreshTokenEnvelope as Buffer, bindings.sessionToken(service, principal, 'refresh_token'))
          .toString(),
        expiresAt: record.accessTokenExpiresAt,
        needsReauthentication: record.needsReauthentication === true,
        version: record.version,
      };
    },
    async exchange(principal) {
      const { response } = await gateway.exchange(principal, agent);
      return { status: response.status, body: response.json() };
    },
    async revokeRefreshToken(principal) {
      await useRefreshTokenElsewhere(provider, (await fixture.stored(principal)).refreshToken);
    },
    async stop() {
      await gateway.stop();
      await provider.stop();
    },
  };
  return fixture;
}

/**
 * The log captures of every broker of this file. Lines written outside a request (the
 * sweeper's) go to the first logger nestjs-pino saw in the process, so they are searched
 * in all of them (by service id, which is unique to a fixture).
 */
const captures: LogCapture[] = [];

function logRecords(): Record<string, unknown>[] {
  return captures.flatMap((logs) => logs.records());
}

/** The broker's `broker_vault_refreshes_total` for `outcome` and `trigger` (GET /metrics on the admin server). */
async function vaultRefreshes(mail: MailFixture, outcome: string, trigger: string): Promise<number> {
  const scrape = await http(`${mail.gateway.broker.url('admin')}/metrics`);
  expect(scrape.status).toBe(200);
  const line = scrape.text
    .split('\n')
    .find((l) => l.startsWith(`broker_vault_refreshes_total{outcome="${outcome}",trigger="${trigger}"}`));
  return Number(line?.split(' ').at(-1) ?? Number.NaN);
}

describe.each(testBackends())('proactive refresh of third-party tokens on $name', (backend) => {
  let mail: MailFixture;

  beforeAll(async () => {
    mail = await startMailFixture(backend, brokerConfig({ interval: '150ms', window: '5m' }));
    await mail.connect(ALICE);
    await mail.connect(BOB, { grant: false });
  });

  afterAll(async () => {
    await mail?.stop();
  });

  it("runs one sweeper per process: the end-user server's, not the admin server's", () => {
    expect(mail.sweeper.sweeping).toBe(true);
    expect(mail.gateway.broker.broker.server('admin').app.get(ProactiveRefreshSweeper).sweeping).toBe(false);
  });

  it('refreshes a due session with a dependent agent before any exchange; a session without an agent is left alone', async () => {
    const [alice, bob] = [await mail.stored(ALICE), await mail.stored(BOB)];
    const refreshes = mail.provider.refreshes();
    await mail.makeDue([ALICE, BOB]);
    await eventually(async () => (await mail.stored(ALICE)).accessToken !== alice.accessToken);
    expect(mail.provider.refreshes()).toBe(refreshes + 1);
    // Counted as a proactive refresh (by its metric labels), not as the exchange's.
    expect(await vaultRefreshes(mail, 'refreshed', 'proactive')).toBe(1);
    expect(await vaultRefreshes(mail, 'refreshed', 'exchange')).toBe(0);
    const refreshed = await mail.stored(ALICE);
    expect(refreshed.refreshToken).not.toBe(alice.refreshToken);
    expect(refreshed.expiresAt?.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    // Bob's session is due too, but no agent depends on it: a sweep after Alice's leaves it as it was.
    const summary = await mail.sweeper.sweepNow();
    expect(summary.claimed).toBe(0);
    expect(await mail.stored(BOB)).toMatchObject({ accessToken: bob.accessToken, needsReauthentication: false });
    expect(mail.provider.refreshes()).toBe(refreshes + 1);
    // The exchange serves the token the sweep stored, without a refresh.
    const exchanged = await mail.exchange(ALICE);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.access_token).toBe(refreshed.accessToken);
    expect(mail.provider.refreshes()).toBe(refreshes + 1);
    for (const logs of captures)
      expect(
        logs.leaked([alice.accessToken, alice.refreshToken, refreshed.accessToken, refreshed.refreshToken]),
      ).toEqual([]);
  });

  it.each(['exchange', 'sweep'] as const)(
    'a racing exchange and sweep on one due session cause exactly one provider refresh (%s started first)',
    async (first) => {
      const before = await mail.stored(ALICE);
      const refreshes = mail.provider.refreshes();
      const gate = new RefreshGate();
      mail.control.gate = gate;
      // Expired: the exchange must refresh too, never serve the old token. Whichever refresh reaches the provider
      // first (a background sweep may) is held there while the other joins: the single flight in this process,
      // the row lock (PostgreSQL: the claim skips the locked row) and the version re-check after it.
      await mail.makeDue([ALICE], new Date(Date.now() - 120_000));
      try {
        const exchange = first === 'exchange' ? mail.exchange(ALICE) : undefined;
        const sweep = first === 'sweep' ? mail.sweeper.sweepNow() : undefined;
        await gate.arrived;
        const exchanged = exchange ?? mail.exchange(ALICE);
        const swept = sweep ?? mail.sweeper.sweepNow();
        await new Promise((resolve) => setTimeout(resolve, 100));
        gate.release();
        const [response] = await Promise.all([exchanged, swept]);
        expect(response.status).toBe(200);
        const after = await mail.stored(ALICE);
        expect(after.accessToken).not.toBe(before.accessToken);
        expect(response.body.access_token).toBe(after.accessToken);
      } finally {
        gate.release();
        mail.control.gate = undefined;
      }
      expect(mail.provider.refreshes()).toBe(refreshes + 1);
      expect(mail.provider.refusedRefreshes()).toBe(0);
    },
  );

  it('a refresh token the provider refused marks the session for re-authentication (sessions API), and the sweep does not retry it', async () => {
    const carol = 'carol@example.com';
    await mail.connect(carol);
    await mail.revokeRefreshToken(carol);
    const [refused, refreshes] = [mail.provider.refusedRefreshes(), mail.provider.refreshes()];
    await mail.makeDue([carol]);
    const user = new ApiClient(mail.gateway.base, carol);
    const marked = async (): Promise<boolean> =>
      (await user.get(`/api/third-party/${mail.service}/session`)).json<{
        data: { session: { needs_reauthentication: boolean } };
      }>().data.session.needs_reauthentication;
    await eventually(marked);
    expect(mail.provider.refusedRefreshes()).toBe(refused + 1);
    expect(await vaultRefreshes(mail, 'reauthentication_required', 'proactive')).toBe(1);
    // Lease over: the marked session is still never claimed again.
    await mail.gateway.broker.broker.runtime.database.dataSource.query(
      'UPDATE third_party_sessions SET refresh_claimed_until = NULL',
    );
    expect((await mail.sweeper.sweepNow()).claimed).toBe(0);
    expect((await mail.sweeper.sweepNow()).claimed).toBe(0);
    expect(mail.provider.refusedRefreshes()).toBe(refused + 1);
    expect(mail.provider.refreshes()).toBe(refreshes);
    expect(await marked()).toBe(true);
  });
});

describe('proactive refresh disabled', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { token_refresh: { proactive: { enabled: false } } },
    });
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it('token_refresh.proactive.enabled: false starts no sweeper in either server', () => {
    for (const kind of ['enduser', 'admin'] as const)
      expect(broker.broker.server(kind).app.get(ProactiveRefreshSweeper).sweeping).toBe(false);
  });
});

describe.each(testBackends())('proactive refresh during a provider outage on $name', (backend) => {
  const clock = new FrozenClock(new Date());
  let mail: MailFixture;

  beforeAll(async () => {
    // Frozen clock, sweeps driven by the test: leases and back-off move only with the clock (a timer sweep in between
    // does what the test's next sweep would have done at the same clock time; sweeps never overlap).
    mail = await startMailFixture(backend, brokerConfig({ interval: '10s', window: '5m', concurrency: 2 }), clock);
    for (const principal of [ALICE, BOB]) await mail.connect(principal);
  });

  afterAll(async () => {
    await mail?.stop();
  });

  it('a provider answering 503 is backed off (interval × 2^n), not hammered; a success resets the back-off', async () => {
    await mail.makeDue([ALICE, BOB], clock.now());
    mail.control.failWith = 503;
    // Both due sessions go to the provider in the first sweep (concurrency 2), and fail: the service backs off 20 s.
    await mail.sweeper.sweepNow();
    expect(mail.control.failedTokenRequests).toBe(2);
    // Leased for 60 s: sweeps before then claim nothing.
    clock.advance(30_000);
    expect((await mail.sweeper.sweepNow()).claimed).toBe(0);
    expect(mail.control.failedTokenRequests).toBe(2);
    // Each round: the lease has lapsed; the provider is asked only when the back-off (20 s, 40 s, 80 s, 160 s …) has too.
    const asked: boolean[] = [];
    for (let round = 0; round < 6; round += 1) {
      const before = mail.control.failedTokenRequests;
      clock.advance(61_000);
      await mail.sweeper.sweepNow();
      asked.push(mail.control.failedTokenRequests > before);
    }
    // t = 91 s: asked (back-off 40 s); 152 s: asked (80 s, until 232 s); 213 s: backed off; 274 s: asked (160 s, until 434 s); 335 s, 396 s: backed off.
    expect(asked).toEqual([true, true, false, true, false, false]);
    expect(mail.control.failedTokenRequests).toBe(2 + 2 * 3);
    // The provider is back: after the back-off, both sessions are refreshed and the back-off is reset.
    mail.control.failWith = undefined;
    const refreshes = mail.provider.refreshes();
    clock.advance(61_000);
    await mail.sweeper.sweepNow();
    expect(mail.provider.refreshes()).toBe(refreshes + 2);
    expect(mail.control.failedTokenRequests).toBe(2 + 2 * 3);
    // One warn line per back-off change, one line for the recovery: the service id, never a token.
    const lines = logRecords().filter((r) => r.service_id === mail.service);
    expect(
      lines
        .filter((r) => r.msg === 'proactive refresh: the provider is failing; backing off the service')
        .map((r) => r.backoff_ms),
    ).toEqual([20_000, 40_000, 80_000, 160_000]);
    expect(
      lines.filter((r) => r.msg === 'proactive refresh: the provider answered again; back-off reset'),
    ).toHaveLength(1);
  });
});

describe.runIf(postgresServerUrl())('proactive refresh in two broker processes on one PostgreSQL', () => {
  let mail: MailFixture;
  const principals = Array.from({ length: 20 }, (_, i) => `user${i}@example.com`);
  // Small batches and frequent sweeps: both processes keep claiming while the other refreshes.
  const proactive = { interval: '100ms', window: '5m', batch_size: 5, concurrency: 2 };
  const keys = {
    encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
    third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
  };
  let storage: Record<string, unknown>;

  beforeAll(async () => {
    storage = { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } };
    mail = await startMailFixture(
      { name: 'postgres', storage: () => Promise.resolve(storage) },
      brokerConfig(proactive, keys),
    );
    for (const principal of principals) await mail.connect(principal);
  });

  afterAll(async () => {
    await mail?.stop();
  });

  it('20 due sessions swept by both processes: each refreshed exactly once', async () => {
    // The second process: the end-user server only (compiled dist/), same database and keys, sweeping on its own.
    const replica = fork('test/support/sweep-replica.mjs', [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const exited = new Promise((resolve) => replica.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      replica.once('error', reject);
      replica.once('message', () => resolve());
      replica.send({
        config: { ...brokerConfig(proactive, keys), storage, server: { enduser: { port: 0 }, admin: { port: 0 } } },
      });
    });
    const refreshes = mail.provider.refreshes();
    await mail.makeDue(principals);
    const database = mail.gateway.broker.broker.runtime.database.dataSource;
    await eventually(async () => {
      const [row] = await database.query<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM third_party_sessions WHERE access_token_expires_at > now() + interval '30 minutes'",
      );
      return row?.n === principals.length;
    });
    const replicaRefreshed = await new Promise<number>((resolve) => {
      replica.once('message', (message: { refreshed: number }) => resolve(message.refreshed));
      replica.send({ stop: true });
    });
    await exited;
    expect(mail.provider.refreshes()).toBe(refreshes + principals.length);
    expect(mail.provider.refusedRefreshes()).toBe(0);
    // Each process counts what its own sweeps refreshed: together, every session once.
    const ownRefreshed = mail.sweeper.totals.refreshed;
    expect(ownRefreshed + replicaRefreshed).toBe(principals.length);
  });
});
