import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Service } from '@broker/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderTokenClient, ProviderUnavailable, sanitiseProviderText } from './provider-token-client';

/** A public service whose token endpoint is `path` on the loopback server. */
function serviceAt(tokenEndpoint: string): Service {
  const now = new Date();
  return {
    id: '00000000-0000-4000-8000-000000000001',
    displayName: 'Provider',
    description: null,
    logoUrl: null,
    clientId: 'c',
    hasClientSecret: false,
    tokenEndpointAuthMethod: 'none',
    issuerUri: 'https://provider.example',
    authorizationEndpoint: 'https://provider.example/authorize',
    tokenEndpoint,
    scopes: [],
    protectedResources: [],
    createdAt: now,
    updatedAt: now,
  };
}

describe('ProviderTokenClient (calls to third-party token endpoints)', () => {
  let server: Server;
  let base: string;
  const client = new ProviderTokenClient();
  const received: { body: string; contentType: string | undefined; accept: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ body, contentType: request.headers['content-type'], accept: request.headers.accept });
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
    expect(await client.refresh(serviceAt(`${base}/ok`), null, 'r t')).toMatchObject({
      accessToken: 'a',
      tokenType: 'Bearer',
    });
    expect(received.at(-1)).toEqual({
      body: 'grant_type=refresh_token&refresh_token=r+t&client_id=c',
      contentType: 'application/x-www-form-urlencoded',
      accept: 'application/json',
    });
  });

  it('never follows a redirect', async () => {
    const before = received.length;
    const refused = client.refresh(serviceAt(`${base}/redirect`), null, 'r');
    await expect(refused).rejects.toBeInstanceOf(ProviderUnavailable);
    await expect(refused).rejects.toThrow(/redirect \(302\), which is not followed/);
    // An answer came: the provider is reachable, its answer unusable.
    await expect(refused).rejects.toMatchObject({ unreachable: false });
    expect(received.slice(before).map((r) => r.body)).toEqual(['grant_type=refresh_token&refresh_token=r&client_id=c']);
  });

  it('refuses an answer over 1 MiB', async () => {
    const huge = client.refresh(serviceAt(`${base}/huge`), null, 'r');
    await expect(huge).rejects.toThrow(/larger than 1 MiB/);
    await expect(huge).rejects.toMatchObject({ unreachable: false });
  });

  it('fails cleanly when nothing listens', async () => {
    const refused = client.refresh(serviceAt('http://127.0.0.1:9/token'), null, 'r');
    await expect(refused).rejects.toThrow(/token endpoint unreachable/);
    await expect(refused).rejects.toMatchObject({ unreachable: true });
  });

  it('reports a non-JSON error page without its content', async () => {
    const failed = client.refresh(serviceAt(`${base}/error`), null, 'r');
    await expect(failed).rejects.toThrow('token endpoint answered 500');
    await expect(failed).rejects.not.toThrow(/internal details/);
    // A 5xx: the provider failed, as good as unreachable.
    await expect(failed).rejects.toMatchObject({ unreachable: true });
  });
});

describe('sanitiseProviderText', () => {
  it('keeps printable ASCII, collapses whitespace and caps the length', () => {
    expect(sanitiseProviderText('bad\r\nthing\u0000 <b>x</b>')).toBe('bad thing <b>x</b>');
    expect(sanitiseProviderText('x'.repeat(500))).toHaveLength(200);
    expect(sanitiseProviderText({ not: 'a string' })).toBe('');
  });
});
