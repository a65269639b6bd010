import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm, ProviderUnavailable, sanitiseProviderText } from './provider-http';

describe('postForm (calls to third-party token endpoints)', () => {
  let server: Server;
  let base: string;
  const received: { body: string; contentType: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ body, contentType: request.headers['content-type'] });
        switch (request.url ?? '') {
          case '/ok':
            response.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"a"}');
            break;
          case '/redirect':
            response.writeHead(302, { location: '/ok' }).end();
            break;
          case '/huge':
            response.writeHead(200, { 'content-type': 'application/json' });
            response.end(Buffer.alloc(2 * 1024 * 1024, 32));
            break;
          case '/slow':
            setTimeout(() => response.writeHead(200).end('{}'), 1_000);
            break;
          default:
            response.writeHead(500).end('<html>internal details</html>');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('posts a form and parses a JSON answer', async () => {
    expect(await postForm(`${base}/ok`, { grant_type: 'refresh_token', refresh_token: 'r t' })).toEqual({ status: 200, json: { access_token: 'a' } });
    expect(received.at(-1)).toEqual({ body: 'grant_type=refresh_token&refresh_token=r+t', contentType: 'application/x-www-form-urlencoded' });
  });

  it('never follows a redirect', async () => {
    await expect(postForm(`${base}/redirect`, {})).rejects.toThrow(/redirect \(302\), which is not followed/);
  });

  it('refuses an answer over 1 MiB', async () => {
    await expect(postForm(`${base}/huge`, {})).rejects.toThrow(/larger than 1 MiB/);
  });

  it('gives up after the total timeout', async () => {
    await expect(postForm(`${base}/slow`, {}, {}, { connectTimeoutMs: 200, totalTimeoutMs: 200, maxResponseBytes: 1024 })).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('fails cleanly when nothing listens', async () => {
    await expect(postForm('http://127.0.0.1:9/token', {})).rejects.toThrow(/token endpoint unreachable/);
  });

  it('reports a non-JSON error page without its content', async () => {
    expect(await postForm(`${base}/error`, {})).toEqual({ status: 500, json: undefined });
  });
});

describe('sanitiseProviderText', () => {
  it('keeps printable ASCII, collapses whitespace and caps the length', () => {
    expect(sanitiseProviderText('bad\r\nthing\u0000 <b>x</b>')).toBe('bad thing <b>x</b>');
    expect(sanitiseProviderText('x'.repeat(500))).toHaveLength(200);
    expect(sanitiseProviderText({ not: 'a string' })).toBe('');
  });
});
