import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import {
  ApiClient,
  freePort,
  startJwtIssuer,
  startTestBroker,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const FORM = 'application/x-www-form-urlencoded';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The headers whose value both entrances must agree on (the rest, date and length, vary by request). */
const COMPARED_HEADERS = ['content-type', 'cache-control', 'pragma', 'connection', 'www-authenticate'] as const;

interface Case {
  readonly name: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer;
  /** Refused by the Nest pipeline before routing (its log line names no route there). */
  readonly beforeRouting?: boolean;
}

interface Exchange {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  readonly log: Record<string, unknown>;
}

/**
 * The token endpoint has two entrances, the hot route (`POST /oauth2/token`,
 * answered from node:http) and the Nest route (reached when the URL carries a query
 * string). Both run the same pipeline steps, so every case must come out the same way:
 * status, the headers a client acts on, the JSON body (token bytes aside) and the log
 * line's fields.
 */
describe('token endpoint: hot route and Nest route answer alike', () => {
  let issuer: TestJwtIssuer;
  let broker: TestBroker;
  let base: string;
  let agent: string;
  let secret: string;
  // Keep-alive, so that `Connection` in the answer is the server's choice, not an echo of the client's `close`.
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        token_exchange: {
          client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri },
          authorization: { cel: { expression: 'client_assertion.sub == "gateway-1"' } },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://mail.example.com'],
      })
    ).json<{ id: string }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    agent = (
      await admin.post('/api/agents', { display_name: 'Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    secret = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>()
      .client_secret;
  });

  afterAll(async () => {
    keepAlive.destroy();
    await broker.stop();
    await issuer.stop();
  });

  const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
  const assertion = (): Promise<string> => issuer.sign({ sub: 'gateway-1', jti: randomUUID() }, { audience: base });

  /** Sends one case to `path` under a fresh trace id; resolves with the answer and the request's log line. */
  function send(path: string, testCase: Case, on: TestBroker = broker): Promise<Exchange> {
    const traceId = randomBytes(16).toString('hex');
    const headers: OutgoingHttpHeaders = { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, ...testCase.headers };
    if (testCase.body !== undefined && headers['content-length'] === undefined)
      headers['content-length'] = Buffer.byteLength(testCase.body);
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        `${on.url('enduser')}${path}`,
        { method: 'POST', headers, agent: keepAlive },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const traceresponse = response.headers.traceresponse;
            expect(traceresponse, `${testCase.name} at ${path}`).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
            logLineOf(on, traceId, `${testCase.name} at ${path}`).then(
              (log) =>
                resolve({
                  status: response.statusCode ?? 0,
                  headers: response.headers,
                  body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
                  log,
                }),
              reject,
            );
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end(testCase.body);
    });
  }

  /**
   * The request's one log line. It is written when the response finishes, which for a
   * refused body is after the rest of the body has been drained: wait for it.
   */
  async function logLineOf(on: TestBroker, traceId: string, what: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const lines = on.logs
        .records()
        .filter(
          (record) =>
            record.trace_id === traceId && (record.msg === 'request completed' || record.msg === 'request failed'),
        );
      if (lines.length > 1) throw new Error(`${what}: ${lines.length} log lines`);
      if (lines[0] !== undefined) return lines[0];
      if (Date.now() > deadline) throw new Error(`${what}: no log line`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** What must be equal: the token's bytes, expiry and per-request references are replaced by placeholders. */
  function comparable(exchange: Exchange, testCase: Case, entrance: 'hot' | 'nest'): Record<string, unknown> {
    const body = { ...(exchange.body as Record<string, unknown>) };
    if (typeof body.access_token === 'string') body.access_token = '<token>';
    if (typeof body.expires_in === 'number') body.expires_in = '<expires>';
    if (typeof body.error_description === 'string')
      body.error_description = body.error_description.replace(/\(ref [0-9a-f]{32}\)/, '(ref <trace>)');
    // Timing and the statement count depend on the moment (the client cache warms up on the first request), not the entrance.
    const {
      trace_id: _trace,
      latency_ms: latency,
      db_queries: queries,
      time: _time,
      pid: _pid,
      hostname: _host,
      route,
      ...log
    } = exchange.log;
    // The hot route knows its route at dispatch; the Nest pipeline only once routed, so a refusal before routing logs null there.
    expect(route, `${testCase.name} (${entrance})`).toBe(
      entrance === 'nest' && testCase.beforeRouting === true ? null : '/oauth2/token',
    );
    expect(typeof latency).toBe('number');
    expect(queries === null || typeof queries === 'number').toBe(true);
    return {
      status: exchange.status,
      headers: Object.fromEntries(COMPARED_HEADERS.map((name) => [name, exchange.headers[name]])),
      body,
      log: { ...log, keys: Object.keys(exchange.log).sort() },
    };
  }

  const cases = (): Case[] => [
    {
      name: 'client_credentials in the form',
      headers: { 'content-type': FORM },
      body: form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret }),
    },
    {
      name: 'client_credentials with HTTP Basic',
      headers: { 'content-type': FORM, authorization: `Basic ${Buffer.from(`${agent}:${secret}`).toString('base64')}` },
      body: form({ grant_type: 'client_credentials' }),
    },
    {
      name: 'unsupported grant type',
      headers: { 'content-type': FORM },
      body: form({ grant_type: 'password', username: 'u', password: 'p' }),
    },
    {
      name: 'missing grant_type',
      headers: { 'content-type': FORM },
      body: form({ client_id: agent, client_secret: secret }),
    },
    {
      name: 'missing client credentials',
      headers: { 'content-type': FORM },
      body: form({ grant_type: 'client_credentials' }),
    },
    { name: 'empty body', headers: { 'content-type': FORM }, body: '' },
    {
      name: 'JSON instead of a form',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: agent, client_secret: secret }),
    },
    {
      name: 'no content type',
      body: form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret }),
    },
    {
      name: 'repeated grant_type',
      headers: { 'content-type': FORM },
      body: `${form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret })}&grant_type=client_credentials`,
    },
    {
      name: 'repeated client_id',
      headers: { 'content-type': FORM },
      body: `${form({ grant_type: 'client_credentials', client_id: agent, client_secret: secret })}&client_id=${agent}`,
    },
    {
      name: 'declared body over 256 KiB',
      headers: { 'content-type': FORM },
      body: `grant_type=client_credentials&pad=${'a'.repeat(256 * 1024)}`,
      beforeRouting: true,
    },
    {
      name: 'gzip-encoded body',
      headers: { 'content-type': FORM, 'content-encoding': 'gzip' },
      body: 'x',
      beforeRouting: true,
    },
    {
      name: 'malformed form (bad percent-encoding and bytes that are not UTF-8)',
      headers: { 'content-type': FORM },
      body: Buffer.concat([
        Buffer.from('grant_type=client_%ZZcredentials&client_id=%E0%A4&client_secret='),
        Buffer.from([0xff, 0xfe]),
      ]),
    },
    {
      name: 'malformed Basic authorization',
      headers: { 'content-type': FORM, authorization: 'Basic !!!not-base64' },
      body: form({ grant_type: 'client_credentials' }),
    },
    {
      name: 'unknown client',
      headers: { 'content-type': FORM },
      body: form({ grant_type: 'client_credentials', client_id: randomUUID(), client_secret: 'nope' }),
    },
    {
      name: 'wrong client secret',
      headers: { 'content-type': FORM },
      body: form({ grant_type: 'client_credentials', client_id: agent, client_secret: `${secret}x` }),
    },
    {
      name: 'token exchange without a client assertion',
      headers: { 'content-type': FORM },
      body: form({
        grant_type: EXCHANGE,
        subject_token: 'x',
        subject_token_type: ACCESS,
        resource: 'https://mail.example.com',
      }),
    },
    {
      name: 'token exchange with a client assertion that is not a JWT',
      headers: { 'content-type': FORM },
      body: form({
        grant_type: EXCHANGE,
        client_assertion_type: JWT_BEARER,
        client_assertion: 'not-a-jwt',
        subject_token: 'x',
        subject_token_type: ACCESS,
        resource: 'https://mail.example.com',
      }),
    },
  ];

  it('answers every token-endpoint case the same on both entrances: status, headers, body and log fields', async () => {
    const exchangeCases: Case[] = [
      {
        name: 'token exchange without a subject token',
        headers: { 'content-type': FORM },
        body: form({
          grant_type: EXCHANGE,
          client_assertion_type: JWT_BEARER,
          client_assertion: await assertion(),
          subject_token_type: ACCESS,
          resource: 'https://mail.example.com',
        }),
      },
      {
        name: 'token exchange with a subject token that is not a JWT',
        headers: { 'content-type': FORM },
        body: form({
          grant_type: EXCHANGE,
          client_assertion_type: JWT_BEARER,
          client_assertion: await assertion(),
          subject_token: 'not-a-jwt',
          subject_token_type: ACCESS,
          resource: 'https://mail.example.com',
        }),
      },
    ];
    for (const testCase of [...cases(), ...exchangeCases]) {
      const hot = await send('/oauth2/token', testCase);
      const nest = await send('/oauth2/token?parity=1', testCase);
      expect(comparable(nest, testCase, 'nest'), testCase.name).toEqual(comparable(hot, testCase, 'hot'));
      // The log names the path without its query string (which may carry credentials).
      expect(nest.log.path, testCase.name).toBe('/oauth2/token');
    }
  });

  it('issues a token on both entrances (the success case is compared on a real answer)', async () => {
    const testCase = cases()[0] as Case;
    for (const path of ['/oauth2/token', '/oauth2/token?parity=1']) {
      const answer = await send(path, testCase);
      expect(answer.status, path).toBe(200);
      expect(answer.body, path).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
      expect(typeof (answer.body as { access_token?: unknown }).access_token, path).toBe('string');
    }
  });

  it('refuses alike on both entrances once the process is shutting down: 503, Connection: close, one log line', async () => {
    const own = await startTestBroker({ servers: BOTH_SERVERS });
    try {
      own.broker.runtime.lifecycle.beginShutdown();
      const testCase: Case = {
        name: 'client_credentials during shutdown',
        headers: { 'content-type': FORM },
        body: form({ grant_type: 'client_credentials' }),
        beforeRouting: true,
      };
      const hot = await send('/oauth2/token', testCase, own);
      const nest = await send('/oauth2/token?parity=1', testCase, own);
      expect(hot.status).toBe(503);
      expect(hot.headers.connection).toBe('close');
      expect(comparable(nest, testCase, 'nest')).toEqual(comparable(hot, testCase, 'hot'));
    } finally {
      await own.stop();
    }
  });
});
