import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiClient,
  ENTRY_POINTS,
  http,
  OTLP_SPAN_KIND,
  OtlpReceiver,
  pgliteStorage,
  startGatewayFixture,
  testBackends,
  writeConfigFile,
  type GatewayFixture,
  type ReceivedSpan,
  type ThirdPartyProvider,
} from '@broker/testing';
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
const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_PARENT = '00f067aa0ba902b7';
const TRACEPARENT = `00-${INCOMING_TRACE}-${INCOMING_PARENT}-01`;
const UNSAMPLED_TRACE = '5cf92f3577b34da6a3ce929d0e0e4736';

/** The ancestors' span ids of `span` within `spans` (its parent first). */
function ancestors(span: ReceivedSpan, spans: readonly ReceivedSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: string[] = [];
  for (let parent = byId.get(span.parentSpanId); parent !== undefined; parent = byId.get(parent.parentSpanId))
    chain.push(parent.spanId);
  return chain;
}

/** A broker (both servers) trusting a gateway, with one person connected to an oidc-provider service and an agent granted it. */
async function startScenario(backend: ReturnType<typeof testBackends>[number], tracing: Record<string, unknown>) {
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    backend,
    algorithm: 'RS256',
    gatewaySub: 'gateway',
    config: {
      third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
      // The test expires the stored token itself: no background sweep may refresh it first.
      token_refresh: { proactive: { enabled: false } },
      telemetry: { tracing },
    },
  });
  const { broker, base } = gateway;
  const traceparents: string[] = [];
  const issued: string[] = [];
  // What the provider's token endpoint saw (the traceparent) and answered (tokens, to search the export for).
  const mail = await registerMailService(new ApiClient(broker.url('admin')), base, (started) => {
    started.provider.use(async (ctx: KoaContextWithOIDC, next) => {
      if (ctx.path === '/token') traceparents.push(ctx.get('traceparent'));
      await next();
      const body = (ctx.path === '/token' ? ctx.body : undefined) as
        { access_token?: string; refresh_token?: string } | undefined;
      for (const token of [body?.access_token, body?.refresh_token]) if (typeof token === 'string') issued.push(token);
    });
  });
  const { provider, service, agent } = mail;
  await grantMail(base, ALICE, mail);
  await connectThirdParty(base, ALICE, service);
  const alice = new ApiClient(base, ALICE);

  /** A token exchange for Alice through the agent, with `traceparent`; the fields sent (secrets to search for). */
  async function exchange(traceparent: string) {
    const { response, fields } = await gateway.exchange(ALICE, agent, { headers: { traceparent } });
    return { response, body: response.json<{ access_token?: string }>(), fields };
  }

  function expireAccessToken(): Promise<void> {
    return expireStored(broker, ALICE, service);
  }

  return { gateway, provider, alice, service, traceparents, issued, exchange, expireAccessToken };
}

describe.each(testBackends())('OpenTelemetry tracing on $name', (backend) => {
  describe('enabled, exporting to a loopback OTLP receiver', () => {
    let receiver: OtlpReceiver;
    let scenario: Awaited<ReturnType<typeof startScenario>> | undefined;
    let gateway: GatewayFixture | undefined;
    let provider: ThirdPartyProvider | undefined;

    beforeAll(async () => {
      receiver = await OtlpReceiver.start();
      scenario = await startScenario(backend, {
        enabled: true,
        endpoint: receiver.endpoint,
        sampling_ratio: 1,
        service_name: 'broker-under-test',
      });
      ({ gateway, provider } = scenario);
    });

    afterAll(async () => {
      await gateway?.stop();
      await provider?.stop();
      await receiver?.stop();
    });

    it('a token exchange that refreshes: one trace continuing traceparent, one server span, database and provider spans below it, traceparent sent to the provider, no secret exported; an unsampled caller: nothing recorded, the decision passed on', async () => {
      const s = scenario as NonNullable<typeof scenario>;
      await s.expireAccessToken();
      s.traceparents.length = 0;
      const refreshes = s.provider.refreshes();
      const { response, body, fields } = await s.exchange(TRACEPARENT);
      expect(response.status).toBe(200);
      expect(s.provider.refreshes()).toBe(refreshes + 1);
      // A Nest-pipeline request too (the other entrance): its span is named after the route template.
      const session = await s.alice.get(`/api/third-party/${s.service}/session`);
      expect(session.status).toBe(200);
      const traceresponse = String(response.headers.traceresponse);
      const sessionTraceresponse = String(session.headers.traceresponse);
      // A caller that did not sample its trace: the broker records nothing of it but passes the decision on.
      await s.expireAccessToken();
      const unsampled = await s.exchange(`00-${UNSAMPLED_TRACE}-${INCOMING_PARENT}-00`);
      expect(unsampled.response.status).toBe(200);
      const [, unsampledTraceId, unsampledSpanId, unsampledFlags] = String(
        unsampled.response.headers.traceresponse,
      ).split('-');
      expect([unsampledTraceId, unsampledFlags]).toEqual([UNSAMPLED_TRACE, '00']);
      expect(s.traceparents[1]).toBe(`00-${UNSAMPLED_TRACE}-${unsampledSpanId}-00`);
      const logs = s.gateway.broker.logs;
      // Shutting down flushes the batch of spans to the receiver.
      await s.gateway.stop();
      gateway = undefined;

      const spans = receiver.spans();
      const [, traceId, serverSpanId, flags] = traceresponse.split('-');
      expect(traceId).toBe(INCOMING_TRACE);
      expect(flags).toBe('01');
      const trace = spans.filter((span) => span.traceId === INCOMING_TRACE);
      const servers = trace.filter((span) => span.kind === OTLP_SPAN_KIND.server);
      expect(servers).toHaveLength(1);
      const server = servers[0] as ReceivedSpan;
      expect(server).toMatchObject({
        spanId: serverSpanId,
        parentSpanId: INCOMING_PARENT,
        name: 'POST /oauth2/token',
        resource: { 'service.name': 'broker-under-test' },
      });
      expect(server.attributes).toEqual({
        'http.request.method': 'POST',
        'http.route': '/oauth2/token',
        'http.response.status_code': 200,
      });
      // The log line of the request names the same trace.
      expect(
        logs
          .records()
          .filter((r) => r.route === '/oauth2/token' && r.msg === 'request completed')
          .map((r) => r.trace_id),
      ).toContain(INCOMING_TRACE);
      // Every other span of the trace descends from the server span.
      for (const span of trace.filter((s) => s !== server)) expect(ancestors(span, trace)).toContain(server.spanId);
      const statements = trace.filter((span) => span.name.startsWith('db '));
      expect(statements.length).toBeGreaterThan(0);
      for (const span of statements) {
        expect(span.kind).toBe(OTLP_SPAN_KIND.client);
        expect(Object.keys(span.attributes).sort()).toEqual(['db.operation.name', 'db.system', 'db.system.name']);
        expect(span.attributes['db.system']).toBe('postgresql');
        expect(span.name).toBe(`db ${String(span.attributes['db.operation.name'])}`);
      }
      expect(statements.map((span) => span.attributes['db.operation.name'])).toContain('SELECT');
      const providerHost = new URL(s.provider.issuer);
      const refresh = trace.filter(
        (span) => span.kind === OTLP_SPAN_KIND.client && span.attributes['server.port'] === Number(providerHost.port),
      );
      expect(refresh).toHaveLength(1);
      expect(refresh[0]?.attributes).toEqual({
        'http.request.method': 'POST',
        'server.address': providerHost.hostname,
        'server.port': Number(providerHost.port),
        'url.path': '/token',
        'http.response.status_code': 200,
      });
      // The provider received the refresh span's context.
      expect(s.traceparents[0]).toBe(`00-${INCOMING_TRACE}-${refresh[0]?.spanId}-01`);
      expect(spans.filter((span) => span.traceId === UNSAMPLED_TRACE)).toEqual([]);

      // The Nest entrance: a new trace (no traceparent sent), minted by the span and returned in traceresponse.
      const [, sessionTraceId, sessionSpanId] = sessionTraceresponse.split('-');
      const nest = spans.filter((span) => span.traceId === sessionTraceId);
      const nestServer = nest.find((span) => span.spanId === sessionSpanId);
      expect(nestServer).toMatchObject({
        parentSpanId: '',
        kind: OTLP_SPAN_KIND.server,
        name: 'GET /api/third-party/:serviceId/session',
      });
      expect(nestServer?.attributes).toEqual({
        'http.request.method': 'GET',
        'http.route': '/api/third-party/:serviceId/session',
        'http.response.status_code': 200,
      });
      expect(logs.records().filter((r) => r.trace_id === sessionTraceId && r.msg === 'request completed')).toHaveLength(
        1,
      );
      const nestStatements = nest.filter((span) => span.name.startsWith('db '));
      expect(nestStatements.length).toBeGreaterThan(0);
      for (const span of nestStatements) expect(span.parentSpanId).toBe(sessionSpanId);

      // No token, assertion, secret, principal or query string anywhere in what was exported.
      const exported = receiver.bodies.join('\n');
      const secrets = [
        fields.client_assertion,
        fields.subject_token,
        body.access_token ?? '',
        ...s.issued,
        s.provider.clientSecret,
        ALICE,
        'redirect_uri',
      ];
      expect(secrets.filter((secret) => secret.length > 0 && exported.includes(secret))).toEqual([]);
    });
  });

  describe('disabled (the default)', () => {
    let receiver: OtlpReceiver;
    let scenario: Awaited<ReturnType<typeof startScenario>> | undefined;
    let gateway: GatewayFixture | undefined;

    beforeAll(async () => {
      receiver = await OtlpReceiver.start();
      // The endpoint is configured, tracing is not enabled: nothing may be sent there.
      scenario = await startScenario(backend, { endpoint: receiver.endpoint });
      gateway = scenario.gateway;
    });

    afterAll(async () => {
      await gateway?.stop();
      await scenario?.provider.stop();
      await receiver?.stop();
    });

    it('exports nothing, propagates nothing, and answers traceresponse with the incoming trace id', async () => {
      const s = scenario as NonNullable<typeof scenario>;
      await s.expireAccessToken();
      s.traceparents.length = 0;
      const { response } = await s.exchange(TRACEPARENT);
      expect(response.status).toBe(200);
      expect(String(response.headers.traceresponse).split('-')[1]).toBe(INCOMING_TRACE);
      expect(s.traceparents).toEqual(['']);
      await s.gateway.stop();
      gateway = undefined;
      expect(receiver.bodies).toEqual([]);
    });
  });
});

/**
 * Runs the built broker (`npm start`'s entry point) with `tracing`, sends one request with
 * a traceparent to /health, stops it with SIGINT, and returns the modules the process had
 * loaded (its `require.cache`, written by a preloaded script when it exits).
 */
async function loadedModulesOfBuiltBroker(tracing: Record<string, unknown>): Promise<string[]> {
  const { dir } = writeConfigFile({});
  const { file } = writeConfigFile({
    server: { enduser: { port: 0 }, admin: { port: 0 }, shutdown: { timeout: '10s' } },
    storage: { pglite: pgliteStorage(join(dir, 'pglite')) },
    development: { keys_file: join(dir, 'development-keys.json') },
    token_refresh: { proactive: { enabled: false } },
    telemetry: { tracing },
  });
  const preload = join(dir, 'record-modules.cjs');
  const modules = join(dir, 'modules.json');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(modules)}, JSON.stringify(Object.keys(require.cache))));\n`,
  );
  const child = spawn(process.execPath, ['--require', preload, ENTRY_POINTS.broker, '--config', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const listening = pending
        .split('\n')
        .flatMap((line) =>
          line.includes('"server":"enduser"') && line.includes('server listening')
            ? [JSON.parse(line) as { url: string }]
            : [],
        );
      if (listening[0] !== undefined) resolve(listening[0].url);
    });
    void exited.then(() => reject(new Error('the broker exited before listening')));
  });
  expect((await http(`${url}/health`, { headers: { traceparent: TRACEPARENT } })).status).toBe(200);
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  return JSON.parse(readFileSync(modules, 'utf8')) as string[];
}

describe('the built broker process', () => {
  // prom-client's process metrics load the OpenTelemetry API (for exemplars): the API alone is no tracing work.
  const openTelemetry = (modules: readonly string[]): string[] =>
    modules.filter(
      (path) => path.includes('/node_modules/@opentelemetry/') && !path.includes('/node_modules/@opentelemetry/api/'),
    );

  it('with tracing disabled (the default) loads no OpenTelemetry module but the API and exports nothing', async () => {
    const receiver = await OtlpReceiver.start();
    try {
      expect(openTelemetry(await loadedModulesOfBuiltBroker({ endpoint: receiver.endpoint }))).toEqual([]);
      expect(receiver.bodies).toEqual([]);
    } finally {
      await receiver.stop();
    }
  });

  it('with tracing enabled loads the SDK and exports the span of the request on shutdown', async () => {
    const receiver = await OtlpReceiver.start();
    try {
      const loaded = openTelemetry(await loadedModulesOfBuiltBroker({ enabled: true, endpoint: receiver.endpoint }));
      expect(loaded.some((path) => path.includes('/@opentelemetry/sdk-trace-base/'))).toBe(true);
      // The health check's own database probe is a child of the request's span.
      const trace = receiver.spans().filter((span) => span.traceId === INCOMING_TRACE);
      expect(
        trace.filter((span) => span.kind === OTLP_SPAN_KIND.server).map((span) => [span.name, span.parentSpanId]),
      ).toEqual([['GET /health', INCOMING_PARENT]]);
    } finally {
      await receiver.stop();
    }
  });
});
