import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonObjectOf, OutboundHttp } from './outbound-http';
import { OutboundHttpError, type OutboundFailure } from './outbound-http-error';
import type { OutboundPolicy } from './outbound-policy';
import { networkList } from './special-use-addresses';

const POLICY: OutboundPolicy = {
  connectTimeoutMs: 1_000,
  totalTimeoutMs: 2_000,
  maxResponseBytes: 1024,
  redirects: 'refuse',
};

/** The reason of the `OutboundHttpError` the call failed with (and its message, for the assertions on it). */
async function failure(call: Promise<unknown>): Promise<{ reason: OutboundFailure; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OutboundHttpError) return { reason: error.reason, message: error.message };
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('OutboundHttp (the one outbound client) against a real server on loopback', () => {
  let server: Server;
  let base: string;
  let connections = 0;
  const paths: string[] = [];
  const received: { body: string; headers: IncomingMessage['headers'] }[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        paths.push(request.url ?? '');
        received.push({ body, headers: request.headers });
        switch (request.url ?? '') {
          case '/json':
            response
              .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'max-age=60' })
              .end('{"a":1}');
            break;
          case '/array':
            response.writeHead(200, { 'content-type': 'application/json' }).end('[1]');
            break;
          case '/html':
            response.writeHead(200, { 'content-type': 'text/html' }).end('<html>secret page</html>');
            break;
          case '/redirect':
            response.writeHead(302, { location: '/json' }).end('moved');
            break;
          case '/error':
            response.writeHead(500, { 'content-type': 'text/html' }).end('<html>internal details</html>');
            break;
          case '/huge':
            response.writeHead(200, { 'content-type': 'application/json' });
            response.end(Buffer.alloc(2 * 1024 * 1024, 32));
            break;
          case '/endless':
            // More than the cap at once, then never the end: only a cap enforced while reading returns.
            response.writeHead(200, { 'content-type': 'application/json' });
            response.write(Buffer.alloc(4096, 32));
            break;
          case '/slow':
            setTimeout(() => response.writeHead(200).end('{}'), 1_000);
            break;
          default:
            response.writeHead(404).end();
        }
      });
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  describe('postForm', () => {
    const http = new OutboundHttp(POLICY);

    it('posts a form-encoded body with the given headers and returns the answer whatever its status', async () => {
      const answer = await http.postForm(
        `${base}/json`,
        { grant_type: 'refresh_token', refresh_token: 'r t' },
        { accept: 'application/json' },
      );
      expect(answer.status).toBe(200);
      expect(jsonObjectOf(answer.body)).toEqual({ a: 1 });
      expect(received.at(-1)?.body).toBe('grant_type=refresh_token&refresh_token=r+t');
      expect(received.at(-1)?.headers).toMatchObject({
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      });
      const error = await http.postForm(`${base}/error`, new URLSearchParams([['a', 'b']]));
      expect(error.status).toBe(500);
      expect(jsonObjectOf(error.body)).toBeUndefined();
    });

    it('refuses a redirect without following it', async () => {
      const before = paths.length;
      expect(await failure(http.postForm(`${base}/redirect`, {}))).toEqual({
        reason: 'redirect',
        message: 'answered a redirect (302), which is not followed',
      });
      expect(paths.slice(before)).toEqual(['/redirect']);
    });

    it("returns a redirect as an answer under redirects: 'return', still without following it", async () => {
      const before = paths.length;
      const answer = await new OutboundHttp({ ...POLICY, redirects: 'return' }).postForm(`${base}/redirect`, {});
      expect({ status: answer.status, body: answer.body.toString() }).toEqual({ status: 302, body: 'moved' });
      expect(paths.slice(before)).toEqual(['/redirect']);
    });

    it('reuses the connection pool of its policy across calls', async () => {
      const pooled = new OutboundHttp(POLICY);
      const before = connections;
      for (let i = 0; i < 6; i += 1) await pooled.postForm(`${base}/json`, {});
      // A pool per request would open six; undici may open a second while the first is being released.
      expect(connections - before).toBeLessThanOrEqual(2);
    });
  });

  describe('the policy', () => {
    it('caps the answer while reading it, naming the cap', async () => {
      const http = new OutboundHttp(POLICY);
      expect(await failure(http.getJson(`${base}/huge`))).toEqual({
        reason: 'too_large',
        message: 'answer larger than 1024 bytes',
      });
      expect(
        await failure(new OutboundHttp({ ...POLICY, maxResponseBytes: 1024 * 1024 }).postForm(`${base}/huge`, {})),
      ).toEqual({ reason: 'too_large', message: 'answer larger than 1 MiB' });
      const started = Date.now();
      expect((await failure(http.getJson(`${base}/endless`))).reason).toBe('too_large');
      expect(Date.now() - started).toBeLessThan(POLICY.totalTimeoutMs);
    });

    it('gives up after the total timeout', async () => {
      const http = new OutboundHttp({ ...POLICY, connectTimeoutMs: 200, totalTimeoutMs: 200 });
      expect((await failure(http.postForm(`${base}/slow`, {}))).reason).toBe('timeout');
    });

    it('fails cleanly when nothing listens', async () => {
      expect(await failure(new OutboundHttp(POLICY).postForm('http://127.0.0.1:9/token', {}))).toMatchObject({
        reason: 'unreachable',
        message: expect.stringMatching(/^unreachable \(/) as unknown,
      });
    });

    it('refuses a content type the policy does not allow, without the content', async () => {
      const http = new OutboundHttp({ ...POLICY, contentTypes: ['application/json'] });
      expect((await http.getJson(`${base}/json`)).json).toEqual({ a: 1 });
      const refused = await failure(http.getJson(`${base}/html`));
      expect(refused).toEqual({
        reason: 'content_type',
        message: 'answered content type "text/html", not one of application/json',
      });
    });

    it('never puts the answer in a message', async () => {
      const refused = await failure(new OutboundHttp(POLICY).getJson(`${base}/error`));
      expect(refused).toEqual({ reason: 'status', message: 'answered 500' });
    });
  });

  describe('getJson', () => {
    const http = new OutboundHttp(POLICY);

    it('returns a JSON object answered with 200, and the headers', async () => {
      const answer = await http.getJson(`${base}/json`);
      expect(answer.json).toEqual({ a: 1 });
      expect(answer.headers['cache-control']).toBe('max-age=60');
      expect(received.at(-1)?.headers.accept).toBe('application/json');
    });

    it('requires 200, a JSON answer and an object', async () => {
      expect(await failure(http.getJson(`${base}/missing`))).toEqual({ reason: 'status', message: 'answered 404' });
      expect(await failure(http.getJson(`${base}/redirect`))).toMatchObject({ reason: 'redirect' });
      expect(
        await failure(new OutboundHttp({ ...POLICY, redirects: 'return' }).getJson(`${base}/redirect`)),
      ).toMatchObject({ reason: 'redirect' });
      expect(await failure(http.getJson(`${base}/html`))).toEqual({
        reason: 'not_json',
        message: 'answer is not JSON',
      });
      expect(await failure(http.getJson(`${base}/array`))).toEqual({
        reason: 'not_object',
        message: 'answer is not a JSON object',
      });
    });
  });

  describe('the SSRF address guard', () => {
    it('refuses a special-use IP literal before connecting', async () => {
      const http = new OutboundHttp({ ...POLICY, addressGuard: { allowed: networkList([]) } });
      const before = connections;
      expect(await failure(http.getJson(`${base}/json`))).toEqual({
        reason: 'forbidden_address',
        message: 'the host is a special-use address',
      });
      expect(await failure(http.getJson('http://[::1]:9/json'))).toMatchObject({ reason: 'forbidden_address' });
      expect(await failure(http.getJson('http://169.254.169.254/latest/meta-data'))).toMatchObject({
        reason: 'forbidden_address',
      });
      expect(await failure(http.getJson('http://[::7f00:1]:9/json'))).toMatchObject({ reason: 'forbidden_address' });
      expect(await failure(http.getJson('http://[fec0::1]:9/json'))).toMatchObject({ reason: 'forbidden_address' });
      expect(connections).toBe(before);
    });

    it('refuses a name that resolves to a special-use address, at connect time', async () => {
      const resolved: string[] = [];
      const http = new OutboundHttp({
        ...POLICY,
        addressGuard: {
          allowed: networkList([]),
          lookup: (hostname, _options, callback) => {
            resolved.push(hostname);
            callback(null, [
              { address: '93.184.216.34', family: 4 },
              { address: '127.0.0.1', family: 4 },
            ]);
          },
        },
      });
      const before = connections;
      expect(await failure(http.getJson(`http://internal.example.com:${new URL(base).port}/json`))).toEqual({
        reason: 'forbidden_address',
        message: 'the host resolves to a special-use address',
      });
      expect(resolved).toEqual(['internal.example.com']);
      expect(connections).toBe(before);
    });

    it('connects to an allow-listed network, through the resolver it was given', async () => {
      const http = new OutboundHttp({
        ...POLICY,
        addressGuard: {
          allowed: networkList(['127.0.0.1/32']),
          lookup: (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
        },
      });
      expect((await http.getJson(`http://metadata.example.test:${new URL(base).port}/json`)).json).toEqual({ a: 1 });
      expect((await http.getJson(`${base}/json`)).json).toEqual({ a: 1 });
    });
  });
});
