import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EventType, EventLedger, EventRetention } from '@broker/events';
import { createLogger } from '@broker/http';
import { Database, EventRepository, GrantRepository, SessionRepository } from '@broker/persistence';
import { bindings, EnvelopeCipher } from '@broker/vault';
import {
  ApiClient,
  FrozenClock,
  http,
  LogCapture,
  startGatewayFixture,
  startJwtIssuer,
  testBackends,
  testConfig,
  type HttpResponse,
  type TestBackend,
} from '@broker/testing';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThirdParty, registerMailService } from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const IMPERSONATION_PREFIX = 'https://impersonation.example.com';
const ACTOR_AUDIENCE = 'https://ops.example.com';
const SUBJECT_AUDIENCE = 'https://apps.example.com';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

interface EventRow {
  type: EventType;
  actor_type: string;
  actor_id: string | null;
  principal: string | null;
  agent_id: string | null;
  service_id: string | null;
  outcome: string;
  trace_id: string | null;
  details: Record<string, unknown>;
}

/** The trace id a response's `traceresponse` names (`00-<trace id>-<span id>-<flags>`). */
function traceOf(response: HttpResponse): string {
  const header = response.headers.traceresponse;
  expect(typeof header).toBe('string');
  return (header as string).split('-')[1] as string;
}

/** A broker with a real third-party provider, a service, a permission set and an agent: the recording scenario's world. */
async function world(backend: TestBackend, config: Record<string, unknown> = {}, clock?: FrozenClock) {
  const secrets: string[] = [];
  const issuer = await startJwtIssuer('RS256');
  // Impersonation (local mode): the gateway's issuer signs all three roles.
  const impersonation = {
    audience_prefix: IMPERSONATION_PREFIX,
    rules: [
      {
        name: 'ops',
        roles: {
          client_assertion: {},
          actor: { expected_audience: ACTOR_AUDIENCE },
          subject: { expected_audience: SUBJECT_AUDIENCE },
        },
        trusted_issuers: [
          {
            issuer_uri: issuer.issuer,
            jwks_uri: issuer.jwksUri,
            allowed_algorithms: ['RS256'],
            signs_roles: ['client_assertion', 'actor', 'subject'],
          },
        ],
        authorization: { cel: { expression: 'client_assertion.sub == "gateway"' } },
      },
    ],
  };
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    backend,
    issuer,
    gatewaySub: 'gateway',
    clock,
    config: {
      third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
      oauth2_authorization_server: { impersonation },
      ...config,
    },
  });
  const { broker, base } = gateway;
  const admin = new ApiClient(broker.url('admin'));
  // Every token the provider answers with is a secret the ledger must never hold.
  const { provider, service, set, agent } = await registerMailService(admin, base, (started) => {
    started.provider.use(async (ctx: KoaContextWithOIDC, next) => {
      await next();
      if (ctx.path !== '/token') return;
      const body = (ctx.body ?? {}) as { access_token?: string; refresh_token?: string; id_token?: string };
      for (const token of [body.access_token, body.refresh_token, body.id_token])
        if (typeof token === 'string') secrets.push(token);
    });
    secrets.push(started.clientSecret);
  });
  const alice = new ApiClient(base, ALICE);
  const app = broker.broker.server('enduser').app;

  /** The connect flow; returns the callback's answer (its trace id is the connection's). */
  async function connect(): Promise<HttpResponse> {
    return connectThirdParty(base, ALICE, service, {
      onCallback: (callback) => {
        const code = new URL(callback).searchParams.get('code');
        if (code !== null) secrets.push(code);
      },
    });
  }

  async function exchange(resource = 'https://mail.example.com'): Promise<HttpResponse> {
    const { response, fields } = await gateway.exchange(ALICE, agent, { resource });
    secrets.push(fields.client_assertion, fields.subject_token);
    const token = response.json<{ access_token?: string }>().access_token;
    if (token !== undefined) secrets.push(token);
    return response;
  }

  /** A user impersonation by actor `ops-1` of `subject` towards the agent (RFC 8693 with an actor token). */
  async function impersonate(subject: string): Promise<HttpResponse> {
    const fields = {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      audience: `${IMPERSONATION_PREFIX}/${agent}`,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await issuer.sign({ sub: 'gateway' }, { audience: base }),
      actor_token_type: JWT_TYPE,
      actor_token: await issuer.sign({ sub: 'ops-1' }, { audience: ACTOR_AUDIENCE }),
      subject_token_type: JWT_TYPE,
      subject_token: await issuer.sign({ sub: subject }, { audience: SUBJECT_AUDIENCE }),
    };
    secrets.push(fields.client_assertion, fields.actor_token, fields.subject_token);
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    const token = response.json<{ access_token?: string }>().access_token;
    if (token !== undefined) secrets.push(token);
    return response;
  }

  return {
    gateway,
    impersonate,
    provider,
    service,
    set,
    agent,
    alice,
    app,
    secrets,
    connect,
    exchange,
    database: broker.broker.runtime.database,
    async stop(): Promise<void> {
      await gateway.stop();
      await provider.stop();
      await issuer.stop();
    },
  };
}

type World = Awaited<ReturnType<typeof world>>;

describe.each(testBackends())('the actions that cause events record them, credential-free, on $name', (backend) => {
  let w: World;

  beforeAll(async () => {
    w = await world(backend);
  });

  afterAll(async () => {
    await w?.stop();
  });

  /** The newest event of `type` (hot-path events flushed first). */
  async function latest(type: EventType): Promise<EventRow | undefined> {
    await w.app.get(EventLedger).flush();
    const rows = await w.database.dataSource.query<EventRow[]>(
      'SELECT * FROM events WHERE type = $1 ORDER BY seq DESC LIMIT 1',
      [type],
    );
    return rows[0];
  }

  it('grant.created / grant.replaced / grant.revoked / grant.expired: the person’s own change, readable as soon as the API answered', async () => {
    const created = await w.alice.post(`/api/consent/agents/${w.agent}/grants`, {
      granted_permission_sets: { [w.set]: [w.service] },
    });
    expect(created.status).toBe(201);
    // Same transaction as the grant: readable the moment the answer arrives, with no flush.
    const [now] = await w.database.dataSource.query<EventRow[]>("SELECT * FROM events WHERE type = 'grant.created'");
    expect(now).toMatchObject({
      actor_type: 'principal',
      actor_id: ALICE,
      principal: ALICE,
      agent_id: w.agent,
      service_id: null,
      outcome: 'success',
      trace_id: traceOf(created),
    });
    expect(now?.details).toEqual({
      permission_set_ids: [w.set],
      service_ids: [w.service],
      resource_ids: [],
      valid_until: null,
    });

    const validUntil = new Date(Date.now() + 86_400_000).toISOString();
    const replaced = await w.alice.post(`/api/consent/agents/${w.agent}/grants`, {
      granted_permission_sets: { [w.set]: [w.service] },
      valid_until: validUntil,
    });
    expect(replaced.status).toBeLessThan(300);
    expect(await latest('grant.replaced')).toMatchObject({
      actor_id: ALICE,
      principal: ALICE,
      agent_id: w.agent,
      trace_id: traceOf(replaced),
      details: { permission_set_ids: [w.set], service_ids: [w.service] },
    });

    const revoked = await w.alice.delete(`/api/consent/agents/${w.agent}/grants`);
    expect(revoked.status).toBe(204);
    expect(await latest('grant.revoked')).toMatchObject({
      actor_type: 'principal',
      actor_id: ALICE,
      principal: ALICE,
      agent_id: w.agent,
      outcome: 'success',
      trace_id: traceOf(revoked),
      details: {},
    });

    // An expired grant removed (an empty POST) is recorded as its removal, not as a revocation.
    expect(
      (
        await w.alice.post(`/api/consent/agents/${w.agent}/grants`, {
          granted_permission_sets: { [w.set]: [w.service] },
        })
      ).status,
    ).toBe(201);
    await w.database.dataSource.query(
      "UPDATE grants SET valid_until = now() - interval '1 hour' WHERE principal = $1",
      [ALICE],
    );
    // Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
    await w.database.settleNotifications();
    const [{ valid_until: expiredAt } = { valid_until: new Date(0) }] = await w.database.dataSource.query<
      { valid_until: Date }[]
    >('SELECT valid_until FROM grants WHERE principal = $1', [ALICE]);
    const revocations = (
      await w.database.dataSource.query<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM events WHERE type = 'grant.revoked'",
      )
    )[0]?.n;
    const removed = await w.alice.post(`/api/consent/agents/${w.agent}/grants`, { granted_permission_sets: {} });
    expect(removed.status).toBeLessThan(300);
    expect(await latest('grant.expired')).toMatchObject({
      actor_id: ALICE,
      principal: ALICE,
      agent_id: w.agent,
      trace_id: traceOf(removed),
      details: { valid_until: expiredAt.toISOString() },
    });
    expect(
      (
        await w.database.dataSource.query<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM events WHERE type = 'grant.revoked'",
        )
      )[0]?.n,
    ).toBe(revocations);

    // The grant the rest of the scenario uses.
    expect(
      (
        await w.alice.post(`/api/consent/agents/${w.agent}/grants`, {
          granted_permission_sets: { [w.set]: [w.service] },
        })
      ).status,
    ).toBe(201);
  });

  it('a grant write that rolls back (a delegation failing after the grant row) leaves no grant and no event', async () => {
    const grants = w.app.get(GrantRepository);
    const ledger = w.app.get(EventLedger);
    const before = await w.database.dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM events');
    const ghostSet = '00000000-0000-4000-8000-000000000017';
    await expect(
      grants.upsert(
        crypto.randomUUID(),
        'rollback@example.com',
        w.agent,
        null,
        [{ permissionSetId: ghostSet, serviceId: w.service, scopes: ['mail.read'] }],
        [],
        new Date(),
        (result, manager) =>
          ledger.record(
            {
              type: 'grant.created',
              actor: { type: 'principal', id: 'rollback@example.com' },
              principal: 'rollback@example.com',
              agentId: w.agent,
              serviceId: null,
              outcome: 'success',
              traceId: null,
              details: {
                permission_set_ids: [ghostSet],
                service_ids: [w.service],
                resource_ids: [],
                valid_until: null,
              },
            },
            manager,
          ),
      ),
    ).rejects.toThrow();
    expect(
      await w.database.dataSource.query('SELECT 1 FROM grants WHERE principal = $1', ['rollback@example.com']),
    ).toEqual([]);
    expect(
      await w.database.dataSource.query('SELECT 1 FROM events WHERE principal = $1', ['rollback@example.com']),
    ).toEqual([]);
    expect(await w.database.dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM events')).toEqual(before);
  });

  it('session.connected, token.exchanged (both outcomes), session.refreshed, session.needs_reauthentication, session.disconnected', async () => {
    const connected = await w.connect();
    expect(await latest('session.connected')).toMatchObject({
      actor_type: 'principal',
      actor_id: ALICE,
      principal: ALICE,
      agent_id: null,
      service_id: w.service,
      outcome: 'success',
      trace_id: traceOf(connected),
      details: { scopes: expect.arrayContaining(['mail.read']) as unknown },
    });

    const ok = await w.exchange();
    expect(ok.status).toBe(200);
    expect(await latest('token.exchanged')).toMatchObject({
      actor_type: 'gateway',
      actor_id: 'gateway',
      principal: ALICE,
      agent_id: w.agent,
      service_id: w.service,
      outcome: 'success',
      trace_id: traceOf(ok),
      details: { resource: 'https://mail.example.com', oauth_error: null },
    });
    const refused = await w.exchange('https://unknown.example.com');
    expect(refused.status).toBe(400);
    expect(await latest('token.exchanged')).toMatchObject({
      actor_type: 'gateway',
      principal: ALICE,
      agent_id: w.agent,
      service_id: null,
      outcome: 'failure',
      trace_id: traceOf(refused),
      details: { resource: 'https://unknown.example.com', oauth_error: 'invalid_target' },
    });

    // An expired access token is refreshed by the exchange: the broker's own work, in the exchange's trace.
    await w.database.dataSource.query(
      "UPDATE third_party_sessions SET access_token_expires_at = now() - interval '1 minute' WHERE principal = $1",
      [ALICE],
    );
    // Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
    await w.database.settleNotifications();
    const refreshing = await w.exchange();
    expect(refreshing.status).toBe(200);
    expect(await latest('session.refreshed')).toMatchObject({
      actor_type: 'broker',
      actor_id: null,
      principal: ALICE,
      service_id: w.service,
      outcome: 'success',
      trace_id: traceOf(refreshing),
      details: { trigger: 'exchange' },
    });

    const forced = await w.alice.post(`/api/third-party/${w.service}/session/refresh`, {});
    expect(forced.status).toBe(200);
    expect(await latest('session.refreshed')).toMatchObject({
      actor_type: 'principal',
      actor_id: ALICE,
      trace_id: traceOf(forced),
      details: { trigger: 'forced' },
    });

    // The refresh token is used behind the broker's back (rotated away): the provider refuses the next refresh.
    const record = await w.app.get(SessionRepository).find(ALICE, w.service);
    const refreshToken = w.app
      .get(EnvelopeCipher)
      .decrypt(record?.refreshTokenEnvelope as Buffer, bindings.sessionToken(w.service, ALICE, 'refresh_token'))
      .toString();
    const stolen = await fetch(`${w.provider.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${w.provider.clientId}:${w.provider.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    });
    expect(stolen.status).toBe(200);
    const refusedRefresh = await w.alice.post(`/api/third-party/${w.service}/session/refresh`, {});
    expect(refusedRefresh.status).toBeGreaterThanOrEqual(400);
    expect(await latest('session.needs_reauthentication')).toMatchObject({
      actor_type: 'principal',
      actor_id: ALICE,
      principal: ALICE,
      service_id: w.service,
      outcome: 'failure',
      trace_id: traceOf(refusedRefresh),
      details: { trigger: 'forced' },
    });

    const disconnected = await w.alice.delete(`/api/third-party/${w.service}/session`);
    expect(disconnected.status).toBe(200);
    expect(await latest('session.disconnected')).toMatchObject({
      actor_type: 'principal',
      actor_id: ALICE,
      principal: ALICE,
      service_id: w.service,
      outcome: 'success',
      trace_id: traceOf(disconnected),
      details: {},
    });
  });

  it('impersonation.decided: issued and refused, the actor acting as the subject towards the agent', async () => {
    const issued = await w.impersonate(ALICE);
    expect(issued.status).toBe(200);
    expect(await latest('impersonation.decided')).toMatchObject({
      actor_type: 'principal',
      actor_id: 'ops-1',
      principal: ALICE,
      agent_id: w.agent,
      service_id: null,
      outcome: 'success',
      trace_id: traceOf(issued),
      details: { audience: `${IMPERSONATION_PREFIX}/${w.agent}`, oauth_error: null },
    });
    const refused = await w.impersonate('nobody@example.com');
    expect(refused.status).toBe(403);
    expect(await latest('impersonation.decided')).toMatchObject({
      actor_id: 'ops-1',
      principal: 'nobody@example.com',
      agent_id: w.agent,
      outcome: 'failure',
      trace_id: traceOf(refused),
      details: { oauth_error: 'access_denied' },
    });
  });

  it('a refused exchange whose resource holds a NUL character is recorded (as U+FFFD) and does not hold up the events after it', async () => {
    const hostile = await w.exchange('https://mail.example.com/\u0000x');
    expect(hostile.status).toBe(400);
    // The next exchange's event is written after it (whatever its outcome at this point of the scenario).
    const fine = await w.exchange();
    await w.app.get(EventLedger).flush();
    const rows = await w.database.dataSource.query<EventRow[]>(
      "SELECT * FROM events WHERE type = 'token.exchanged' AND trace_id = ANY($1::text[])",
      [[traceOf(hostile), traceOf(fine)]],
    );
    expect(rows.map((row) => row.details.resource).sort()).toEqual([
      'https://mail.example.com',
      'https://mail.example.com/\uFFFDx',
    ]);
  });

  it('holds no token, assertion, code or client secret anywhere in the table after the scenario', async () => {
    await w.app.get(EventLedger).flush();
    const dump = JSON.stringify(await w.database.dataSource.query('SELECT * FROM events'));
    expect(w.secrets.length).toBeGreaterThan(8);
    expect(w.secrets.filter((secret) => secret.length >= 8 && dump.includes(secret))).toEqual([]);
    // The dump is the scenario's: the search could fail.
    expect(dump).toContain(ALICE);
  });
});

describe.each(testBackends())('the hot-path queue on shutdown and the retention job on $name', (backend) => {
  it('a clean stop writes every queued exchange event: nothing is lost', async () => {
    const directory = backend.name === 'pglite' ? await mkdtemp(join(tmpdir(), 'ledger-')) : undefined;
    const storage =
      directory === undefined ? await backend.storage() : { backend: 'pglite', pglite: { data_dir: directory } };
    const fixed = { name: backend.name, storage: () => Promise.resolve(storage) } as TestBackend;
    try {
      // The queue is written only by a full batch or the interval: neither happens before the stop.
      const w = await world(fixed, { events: { queue: { flush_interval: '1h', batch_size: 10_000 } } });
      expect(
        (
          await w.alice.post(`/api/consent/agents/${w.agent}/grants`, {
            granted_permission_sets: { [w.set]: [w.service] },
          })
        ).status,
      ).toBe(201);
      for (let i = 0; i < 5; i += 1) expect((await w.exchange()).status).toBe(400);
      // Five refused exchanges, and the person's link the first of them made (docs/authorization-requests.md).
      expect(w.app.get(EventLedger).queued).toBe(6);
      await w.stop();
      const config = testConfig({ storage });
      const reopened = await Database.open(config, createLogger(config, new LogCapture()));
      try {
        const rows = await reopened.dataSource.query<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM events WHERE type = 'token.exchanged' AND outcome = 'failure'",
        );
        expect(rows[0]?.n).toBe(5);
        const links = await reopened.dataSource.query<{ n: number }[]>(
          "SELECT count(*)::int AS n FROM events WHERE type = 'authorization_request.created'",
        );
        expect(links[0]?.n).toBe(1);
      } finally {
        await reopened.close();
      }
    } finally {
      if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    }
  });

  it('retention deletes only the events older than events.retention (frozen clock)', async () => {
    const clock = new FrozenClock('2026-06-01T00:00:00Z');
    const w = await world(backend, { events: { retention: '30d' } }, clock);
    try {
      const repository = w.app.get(EventRepository);
      await w.database.dataSource.query('DELETE FROM events');
      const at = (iso: string) => ({
        id: crypto.randomUUID(),
        occurredAt: new Date(iso),
        event: {
          type: 'session.disconnected',
          actor: { type: 'principal', id: iso },
          principal: iso,
          agentId: null,
          serviceId: null,
          outcome: 'success',
          traceId: null,
          details: {},
        } as const,
      });
      await repository.append([
        at('2026-04-01T00:00:00Z'),
        at('2026-05-01T23:59:59Z'),
        at('2026-05-02T00:00:01Z'),
        at('2026-05-31T00:00:00Z'),
      ]);
      expect(await w.app.get(EventRetention).purgeNow()).toBe(2);
      const left = await w.database.dataSource.query<{ principal: string }[]>(
        'SELECT principal FROM events ORDER BY occurred_at',
      );
      expect(left.map((row) => row.principal)).toEqual(['2026-05-02T00:00:01Z', '2026-05-31T00:00:00Z']);
    } finally {
      await w.stop();
    }
  });
});
