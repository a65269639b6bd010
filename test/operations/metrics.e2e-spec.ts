import {
  eventually,
  ApiClient,
  http,
  startGatewayFixture,
  startTestBroker,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { LongPollHub } from '@broker/approvals';
import { SessionRepository } from '@broker/persistence';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE, type Family } from '../support/metric-catalogue';
import {
  connectThirdParty,
  expireAccessToken as expireStored,
  useRefreshTokenElsewhere as useStoredRefreshToken,
  grantMail,
  registerMailService,
} from '../support/mail-service';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const GATEWAY_SUB = 'gateway';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The catalogue, and the process families this test also expects. */
const EXPECTED: Readonly<Record<string, Family>> = {
  ...CATALOGUE,
  nodejs_eventloop_lag_seconds: { type: 'gauge', labels: [] },
  process_cpu_seconds_total: { type: 'counter', labels: [] },
};

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The text exposition format (0.0.4), parsed: the declared types and every sample. */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const declared = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (declared) types.set(declared[1] as string, declared[2] as string);
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[name as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return { types, samples };
}

/** The family a sample belongs to (a histogram's `_bucket`, `_sum` and `_count` series). */
function familyOf(sample: Sample, types: Map<string, string>): string {
  const base = sample.name.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' ? base : sample.name;
}

function value(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.reduce((sum, s) => sum + s.value, 0);
}

describe.each(testBackends())('GET /metrics after real traffic on $name', (backend) => {
  let gateway: GatewayFixture;
  let provider: ThirdPartyProvider;
  let broker: TestBroker;
  let base: string;
  let agent: string;
  let service: string;
  const secrets: string[] = [];
  const exchangeErrors: string[] = [];
  let scrape: HttpResponse;
  let parsed: ReturnType<typeof parseExposition>;

  beforeAll(async () => {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      algorithm: 'RS256',
      gatewaySub: GATEWAY_SUB,
      config: {
        third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
        approvals: { sync: { authorization: { cel: { expression: `client_assertion.sub == "${GATEWAY_SUB}"` } } } },
      },
    });
    ({ broker, base } = gateway);
    const admin = new ApiClient(broker.url('admin'));
    const mail = await registerMailService(admin, base);
    ({ provider, service, agent } = mail);
    await grantMail(base, ALICE, mail);
    await connectThirdParty(base, ALICE, service);

    // The traffic the scrape is checked against: two good exchanges (the second refreshes an expired
    // provider token), one with a forged client assertion, one whose refresh the provider refuses.
    expect((await exchange()).status).toBe(200);
    const forged = await exchange({ client_assertion: 'eyJhbGciOiJSUzI1NiJ9.e30.c2lnbmF0dXJl' });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    await expireAccessToken();
    expect((await exchange()).status).toBe(200);
    await useRefreshTokenElsewhere();
    await expireAccessToken();
    expect((await exchange()).status).toBeGreaterThanOrEqual(400);
    // An approval long-poll held, then woken by a new approval.
    await approvalWokenLongPoll();
    // The client cache: a client_credentials client looked up twice (a miss, then a hit).
    const secret = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    secrets.push(secret);
    for (let i = 0; i < 2; i += 1) {
      const issued = await http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: agent,
          client_secret: secret,
        }).toString(),
      });
      expect(issued.status, issued.text).toBe(200);
      secrets.push(issued.json<{ access_token: string }>().access_token);
    }
    // An admin read by id: its route label must be the template.
    expect((await admin.get(`/api/agents/${agent}`)).status).toBe(200);

    scrape = await http(`${broker.url('admin')}/metrics`);
    parsed = parseExposition(scrape.text);
  });

  afterAll(async () => {
    await gateway?.stop();
    await provider?.stop();
  });

  async function exchange(overrides: Record<string, string> = {}): Promise<HttpResponse> {
    const { response, fields } = await gateway.exchange(ALICE, agent, { fields: overrides });
    secrets.push(fields.client_assertion, fields.subject_token);
    const body = response.json<{ access_token?: string; error?: string }>();
    if (body.access_token !== undefined) secrets.push(body.access_token);
    if (body.error !== undefined) exchangeErrors.push(body.error);
    return response;
  }

  function expireAccessToken(): Promise<void> {
    return expireStored(broker, ALICE, service);
  }

  /** The stored refresh token, used (and so rotated away) behind the broker's back: its next refresh is refused. */
  async function useRefreshTokenElsewhere(): Promise<void> {
    const app = broker.broker.server('enduser').app;
    const record = await app.get(SessionRepository).find(ALICE, service);
    const refreshToken = app
      .get(EnvelopeCipher)
      .decrypt(record?.refreshTokenEnvelope as Buffer, bindings.sessionToken(service, ALICE, 'refresh_token'))
      .toString();
    secrets.push(refreshToken);
    await useStoredRefreshToken(provider, refreshToken);
  }

  async function approvalWokenLongPoll(): Promise<void> {
    const sync = async (headers: Record<string, string> = {}): Promise<HttpResponse> =>
      http(`${base}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
        headers: { 'x-client-assertion': await gateway.assertion(), ...headers },
      });
    const current = (await sync()).headers.etag as string;
    const held = sync({ 'if-none-match': current, 'x-long-poll-timeout': '30' });
    // The change must come after the broker holds the long-poll (else it answers at once, woken by nothing).
    // (Read from the hub itself: a scrape now would fix the cached readings this test checks later.)
    const hub = broker.broker.server('enduser').app.get(LongPollHub);
    await eventually(() => hub.held === 1, Boolean, { waitingFor: 'the long-poll being held' });
    const created = await http(`${base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await gateway.subjectToken(ALICE, agent)}`,
        'x-client-assertion': await gateway.assertion(),
      },
      body: JSON.stringify({ metadata: {}, tool_name: 'send_email', arguments: { to: 'x@example.com' } }),
    });
    expect(created.status, created.text).toBe(201);
    expect((await held).status).toBe(200);
  }

  it('answers the Prometheus text format to a trusted peer, without a principal', () => {
    expect(scrape.status).toBe(200);
    expect(scrape.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('exposes every family of the catalogue with its type and exactly its label names', () => {
    const { types, samples } = parsed;
    for (const [family, { type, labels }] of Object.entries(EXPECTED)) {
      expect(types.get(family), family).toBe(type);
      const series = samples.filter((s) => familyOf(s, types) === family);
      expect(series.length, family).toBeGreaterThan(0);
      for (const sample of series)
        expect(
          Object.keys(sample.labels)
            .filter((l) => l !== 'le')
            .sort(),
          `${family} ${JSON.stringify(sample.labels)}`,
        ).toEqual([...labels].sort());
    }
  });

  it('moved the counters by the traffic: token requests by grant and outcome, refreshes by outcome and trigger, caches, the long-poll wake-up', () => {
    const { samples } = parsed;
    expect(value(samples, 'broker_token_requests_total', { grant_type: 'token_exchange', outcome: 'ok' })).toBe(2);
    for (const code of new Set(exchangeErrors)) {
      expect(value(samples, 'broker_token_requests_total', { grant_type: 'token_exchange', outcome: code }), code).toBe(
        exchangeErrors.filter((e) => e === code).length,
      );
    }
    expect(value(samples, 'broker_token_requests_total', { grant_type: 'client_credentials', outcome: 'ok' })).toBe(2);
    expect(value(samples, 'broker_token_requests_total')).toBe(6);
    expect(value(samples, 'broker_token_exchange_duration_seconds_count')).toBe(4);
    expect(value(samples, 'broker_vault_refreshes_total', { outcome: 'refreshed', trigger: 'exchange' })).toBe(1);
    expect(
      value(samples, 'broker_vault_refreshes_total', { outcome: 'reauthentication_required', trigger: 'exchange' }),
    ).toBe(1);
    expect(value(samples, 'broker_vault_refresh_duration_seconds_count', { trigger: 'exchange' })).toBe(2);
    expect(value(samples, 'broker_sessions_needing_reauthentication')).toBe(1);
    expect(value(samples, 'broker_approvals_pending')).toBe(1);
    expect(value(samples, 'broker_approval_waiters')).toBe(0);
    expect(value(samples, 'broker_approval_wakeups_total')).toBeGreaterThanOrEqual(1);
    expect(value(samples, 'broker_cache_requests_total', { cache: 'verified_jwt', result: 'miss' })).toBeGreaterThan(0);
    expect(value(samples, 'broker_cache_requests_total', { cache: 'client', result: 'miss' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(value(samples, 'broker_cache_requests_total', { cache: 'client' })).toBeGreaterThanOrEqual(2);
    // On PostgreSQL the credential's registry_changed notification may clear the cache between the two lookups.
    if (backend.name === 'pglite')
      expect(value(samples, 'broker_cache_requests_total', { cache: 'client', result: 'hit' })).toBeGreaterThanOrEqual(
        1,
      );
    // The protected-resource catalog's series exist from start-up, whether or not a request named a resource.
    expect(
      samples
        .filter((s) => s.name === 'broker_cache_requests_total' && s.labels.cache === 'resource_catalog')
        .map((s) => s.labels.result)
        .sort(),
    ).toEqual(['hit', 'miss']);
    expect(value(samples, 'broker_key_set_fetch_failures_total', { key_set: 'trust_anchor' })).toBe(0);
    expect(
      value(samples, 'broker_key_set_seconds_since_last_success', { key_set: 'trust_anchor' }),
    ).toBeGreaterThanOrEqual(0);
    expect(value(samples, 'broker_db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
    if (backend.name === 'pglite') expect(value(samples, 'broker_db_pglite_wait_seconds_count')).toBeGreaterThan(0);
  });

  it('labels requests of both servers and both entrances by route template, never by raw path', () => {
    const { samples } = parsed;
    expect(
      value(samples, 'broker_http_request_duration_seconds_count', {
        server: 'enduser',
        route: '/oauth2/token',
        method: 'POST',
        status_class: '2xx',
      }),
    ).toBe(4);
    expect(
      value(samples, 'broker_http_request_duration_seconds_count', {
        server: 'enduser',
        route: '/oauth2/token',
        method: 'POST',
        status_class: '4xx',
      }),
    ).toBe(2);
    expect(
      value(samples, 'broker_http_request_duration_seconds_count', {
        server: 'admin',
        route: '/api/agents/:agentId',
        method: 'GET',
        status_class: '2xx',
      }),
    ).toBe(1);
    expect(
      value(samples, 'broker_http_request_duration_seconds_count', {
        server: 'enduser',
        route: '/api/approvals',
        method: 'GET',
        status_class: '2xx',
      }),
    ).toBeGreaterThanOrEqual(2);
    expect(scrape.text).not.toMatch(UUID);
  });

  it('carries no token, assertion or principal', () => {
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(scrape.text).not.toContain(secret);
    expect(scrape.text).not.toContain(ALICE);
    expect(scrape.text).not.toContain(GATEWAY_SUB + '"');
  });
});

describe('GET /metrics refusals', () => {
  it('is 403 forbidden to a peer outside the admin server’s trusted sources', async () => {
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { server: { admin: { authentication: { preauth: { trusted_sources: ['192.0.2.0/24'] } } } } },
    });
    try {
      const response = await http(`${broker.url('admin')}/metrics`);
      expect(response.status).toBe(403);
      expect(response.json<{ error: string; message: string }>()).toEqual({
        error: 'forbidden',
        message: expect.any(String) as string,
      });
      expect(response.text).not.toContain('broker_');
    } finally {
      await broker.stop();
    }
  });

  it('is 404 not_found when telemetry.metrics.enabled is false', async () => {
    const broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { telemetry: { metrics: { enabled: false } } },
    });
    try {
      const response = await http(`${broker.url('admin')}/metrics`);
      expect(response.status).toBe(404);
      expect(response.json<{ error: string; message: string }>()).toEqual({
        error: 'not_found',
        message: expect.any(String) as string,
      });
      expect(broker.broker.runtime.telemetry.metrics.registry.getMetricsAsArray()).toHaveLength(0);
    } finally {
      await broker.stop();
    }
  });
});
