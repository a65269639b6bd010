import { http, httpJson, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOM_DETAIL, PROBED_SERVERS } from '../support/probe.module';

const TRACERESPONSE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const CONSENT_UI = 'https://consent.example.com';
const USER = { 'x-remote-user': 'alice@example.com' };

describe('HTTP conventions', () => {
  let broker: TestBroker;
  let user: string;
  let admin: string;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: PROBED_SERVERS,
      config: { server: { enduser: { consent_ui_url: CONSENT_UI } } },
    });
    user = broker.url('enduser');
    admin = broker.url('admin');
  });

  afterAll(async () => {
    await broker.stop();
  });

  describe('traceresponse', () => {
    it('is on every end-user response: 2xx, 4xx, 5xx, unknown route and preflight', async () => {
      const responses = await Promise.all([
        http(`${user}/health`),
        http(`${user}/api/probe/whoami`),
        http(`${user}/api/probe/boom`),
        http(`${user}/no/such/route`),
        http(`${user}/api/probe/whoami`, {
          method: 'OPTIONS',
          headers: { origin: CONSENT_UI, 'access-control-request-method': 'GET' },
        }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 401, 500, 404, 204]);
      for (const response of responses) expect(response.headers.traceresponse).toMatch(TRACERESPONSE);
    });

    it('reuses the trace id of a valid incoming traceparent with a new span id', async () => {
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const response = await http(`${user}/health`, { headers: { traceparent } });
      const [, traceId, spanId, flags] = TRACERESPONSE.exec(response.headers.traceresponse as string) ?? [];
      expect(traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(spanId).not.toBe('00f067aa0ba902b7');
      expect(flags).toBe('01');
    });

    it('mints a fresh trace id for an invalid traceparent and uses it as the request id in the log', async () => {
      const response = await http(`${user}/health`, { headers: { traceparent: '00-zzzz-00f067aa0ba902b7-01' } });
      const traceId = TRACERESPONSE.exec(response.headers.traceresponse as string)?.[1] as string;
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const line = broker.logs
        .records()
        .find((record) => record.trace_id === traceId && record.msg === 'request completed');
      expect(line).toMatchObject({ method: 'GET', route: '/health', path: '/health', status: 200 });
      expect(typeof line?.latency_ms).toBe('number');
    });

    it('names the trace id in a 500 and keeps the detail in the log only', async () => {
      const response = await http(`${user}/api/probe/boom`);
      const traceId = TRACERESPONSE.exec(response.headers.traceresponse as string)?.[1] as string;
      expect(response.json()).toEqual({ error: 'internal error', message: `internal error (ref ${traceId})` });
      expect(response.text).not.toContain(BOOM_DETAIL);
      const logged = broker.logs
        .records()
        .find((record) => record.trace_id === traceId && record.msg === 'request failed with a server error');
      expect(JSON.stringify(logged)).toContain(BOOM_DETAIL);
    });
  });

  describe('CORS', () => {
    it('answers a preflight on /api/* for the consent UI origin, with credentials, never *', async () => {
      const response = await http(`${user}/api/probe/echo`, {
        method: 'OPTIONS',
        headers: {
          origin: CONSENT_UI,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(CONSENT_UI);
      expect(response.headers['access-control-allow-credentials']).toBe('true');
      expect(response.headers['access-control-allow-methods']).toContain('POST');
      expect(response.headers.vary).toContain('Origin');
    });

    it('answers a preflight from any other origin 204 without grant headers (a clear CORS refusal, not a 404)', async () => {
      for (const path of ['/api/probe/echo', '/api/consent/agents', '/api/no-such-route']) {
        for (const origin of ['https://evil.example', 'null']) {
          const response = await http(`${user}${path}`, {
            method: 'OPTIONS',
            headers: {
              origin,
              'access-control-request-method': 'POST',
              'access-control-request-headers': 'content-type',
            },
          });
          expect(response.status, `${path} from ${origin}`).toBe(204);
          expect(response.text).toBe('');
          expect(response.headers['access-control-allow-origin']).toBeUndefined();
          expect(response.headers['access-control-allow-credentials']).toBeUndefined();
          expect(response.headers['access-control-allow-methods']).toBeUndefined();
          expect(response.headers.vary).toContain('Origin');
          expect(response.headers.traceresponse).toBeDefined();
        }
      }
      // A plain OPTIONS (no Access-Control-Request-Method) is no preflight: routed as usual.
      expect(
        (await http(`${user}/api/probe/echo`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } }))
          .status,
      ).toBe(404);
    });

    it('sends no CORS headers on the admin server', async () => {
      const response = await http(`${admin}/api/probe/echo`, {
        method: 'OPTIONS',
        headers: { origin: CONSENT_UI, 'access-control-request-method': 'POST' },
      });
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      expect(response.status).toBe(404);
    });

    it('does not apply CORS outside /api', async () => {
      const response = await http(`${user}/health`, { headers: { origin: CONSENT_UI } });
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('error envelopes', () => {
    it('answers an unknown end-user or admin route with 404 {error, message}', async () => {
      for (const base of [user, admin]) {
        const response = await http(`${base}/api/nothing-here?token=should-not-echo`, { headers: USER });
        expect(response.status).toBe(404);
        expect(response.json()).toEqual({ error: 'not_found', message: 'no route GET /api/nothing-here' });
      }
    });

    it('answers an unknown OAuth2 route with 404 {error, error_description}', async () => {
      const response = await http(`${user}/oauth2/nothing-here`);
      expect(response.status).toBe(404);
      expect(response.json()).toEqual({
        error: 'not_found',
        error_description: 'no endpoint GET /oauth2/nothing-here',
      });
      expect(response.headers['cache-control']).toBe('no-store');
    });
  });

  describe('bad input gets a clear 4xx', () => {
    it("rejects malformed JSON with 400 on both servers, in each server's vocabulary", async () => {
      const body = '{"name": ';
      const enduser = await http(`${user}/api/probe/echo`, {
        method: 'POST',
        headers: { ...USER, 'content-type': 'application/json' },
        body,
      });
      expect(enduser.status).toBe(400);
      expect(enduser.json()).toEqual({ error: 'invalid request', message: 'the request body is not valid JSON' });
      const adminResponse = await http(`${admin}/api/probe/echo`, {
        method: 'POST',
        headers: { ...USER, 'content-type': 'application/json' },
        body,
      });
      expect(adminResponse.status).toBe(400);
      expect(adminResponse.json()).toEqual({
        error: 'invalid request body',
        message: 'the request body is not valid JSON',
      });
    });

    it('rejects a non-JSON content type with 415', async () => {
      const response = await http(`${user}/api/probe/echo`, {
        method: 'POST',
        headers: { ...USER, 'content-type': 'text/plain' },
        body: 'name=x',
      });
      expect(response.status).toBe(415);
      expect(response.json()).toEqual({
        error: 'unsupported media type',
        message: 'the request body must be application/json',
      });
    });

    it('rejects an oversized body with 413', async () => {
      const response = await httpJson(`${user}/api/probe/echo`, 'POST', { name: 'x'.repeat(1024 * 1024 + 10) }, USER);
      expect(response.status).toBe(413);
      expect(response.json<{ error: string }>().error).toBe('payload too large');
    });

    it('rejects unknown fields and names the field', async () => {
      const response = await httpJson(`${user}/api/probe/echo`, 'POST', { name: 'ok', extra: 1 }, USER);
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({
        error: 'invalid request',
        message: 'extra: property extra should not exist',
        details: [{ field: 'extra', problem: 'property extra should not exist' }],
      });
      const adminResponse = await httpJson(`${admin}/api/probe/echo`, 'POST', { name: 'ok', extra: 1 }, USER);
      expect(adminResponse.json<{ error: string }>().error).toBe('invalid request body');
    });

    it('rejects an invalid field value naming the field', async () => {
      const response = await httpJson(`${user}/api/probe/echo`, 'POST', { name: 'far too long a name' }, USER);
      expect(response.status).toBe(400);
      expect(response.json<{ message: string }>().message).toBe(
        'name: name must be shorter than or equal to 10 characters',
      );
      expect((await httpJson(`${user}/api/probe/echo`, 'POST', { name: 'fine' }, USER)).json()).toEqual({
        data: { name: 'fine' },
      });
    });

    it('rejects a malformed UUID in a path: bad request (end-user), invalid request (admin)', async () => {
      const enduser = await http(`${user}/api/probe/items/not-a-uuid`, { headers: USER });
      expect(enduser.status).toBe(400);
      expect(enduser.json<{ error: string }>().error).toBe('bad request');
      const adminResponse = await http(`${admin}/api/probe/items/not-a-uuid`, { headers: USER });
      expect(adminResponse.status).toBe(400);
      expect(adminResponse.json<{ error: string }>().error).toBe('invalid request');
    });
  });

  describe('OpenAPI', () => {
    it("serves each server's own document at /openapi.json", async () => {
      const enduser = (await http(`${user}/openapi.json`)).json<{
        info: { title: string; version: string };
        paths: Record<string, unknown>;
        components: { securitySchemes: Record<string, unknown> };
      }>();
      expect(enduser.info).toMatchObject({ title: 'Agent Identity Broker: end-user API', version: '1.0.0' });
      expect(enduser.paths['/health']).toBeDefined();
      expect(Object.keys(enduser.components.securitySchemes)).toEqual(
        expect.arrayContaining(['SessionAuth', 'PrincipalHeader', 'preAuth', 'BearerSubjectToken', 'ClientAssertion']),
      );
      const adminDoc = (await http(`${admin}/openapi.json`)).json<{ info: { title: string } }>();
      expect(adminDoc.info.title).toBe('Agent Identity Broker: admin API');
    });
  });
});

describe('traceresponse switched off by config', () => {
  it('sends no traceresponse when request_context.trace.response_enabled is false', async () => {
    const broker = await startTestBroker({
      servers: PROBED_SERVERS,
      config: { request_context: { trace: { response_enabled: false } } },
    });
    try {
      const ok = await http(`${broker.url('enduser')}/health`);
      const notFound = await http(`${broker.url('enduser')}/nowhere`);
      expect(ok.status).toBe(200);
      expect(notFound.status).toBe(404);
      expect(ok.headers.traceresponse).toBeUndefined();
      expect(notFound.headers.traceresponse).toBeUndefined();
      // The body is unchanged either way.
      expect(Object.keys(ok.json())).toEqual(['status', 'timestamp', 'uptime_seconds']);
    } finally {
      await broker.stop();
    }
  });
});
