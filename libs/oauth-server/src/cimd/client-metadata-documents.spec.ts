import { FrozenClock, startHttpsDocumentServer, testConfig, type HttpsDocumentServer } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientMetadataDocuments } from './client-metadata-documents';

describe('ClientMetadataDocuments cache', () => {
  let docs: HttpsDocumentServer;
  let origin: string;

  beforeAll(async () => {
    docs = await startHttpsDocumentServer((request, response) => {
      const path = request.url ?? '';
      if (path.startsWith('/missing')) return void response.writeHead(404).end();
      // A document naming another client_id, offered for a long cache lifetime.
      const clientId = path.startsWith('/foreign') ? `${origin}/someone-else.json` : `${origin}${path}`;
      response
        .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' })
        .end(JSON.stringify({ client_id: clientId, redirect_uris: ['https://agent.example.com/cb'] }));
    });
    origin = `https://127.0.0.1:${docs.port}`;
  });

  afterAll(async () => {
    await docs.stop();
  });

  function documents(clock: FrozenClock, cache: Record<string, unknown> = {}): ClientMetadataDocuments {
    const config = testConfig({
      oauth2_authorization_server: {
        cimd: {
          enabled: true,
          allowed_networks: ['127.0.0.1/32'],
          tls_ca_file: docs.caFile,
          cache: { min_ttl: '60s', max_ttl: '1h', ...cache },
        },
      },
    });
    return new ClientMetadataDocuments(config, clock);
  }

  const hits = (path: string): number => docs.hits.get(path) ?? 0;

  it('keeps at most max_entries documents, evicting the least recently used', async () => {
    const cache = documents(new FrozenClock(), { max_entries: 2 });
    await cache.get(`${origin}/lru/a.json`);
    await cache.get(`${origin}/lru/b.json`);
    await cache.get(`${origin}/lru/a.json`); // a is now the most recently used
    await cache.get(`${origin}/lru/c.json`); // evicts b
    await cache.get(`${origin}/lru/a.json`);
    await cache.get(`${origin}/lru/c.json`);
    expect([hits('/lru/a.json'), hits('/lru/b.json'), hits('/lru/c.json')]).toEqual([1, 1, 1]);
    await cache.get(`${origin}/lru/b.json`);
    expect(hits('/lru/b.json')).toBe(2);
  });

  it('remembers a failed fetch for failure_ttl instead of fetching it on every request', async () => {
    const clock = new FrozenClock();
    const cache = documents(clock, { failure_ttl: '30s' });
    const url = `${origin}/missing.json`;
    for (let i = 0; i < 3; i += 1) await expect(cache.get(url)).rejects.toThrow('could not be fetched');
    expect(hits('/missing.json')).toBe(1);
    clock.advance(30_001);
    await expect(cache.get(url)).rejects.toThrow('could not be fetched');
    expect(hits('/missing.json')).toBe(2);
  });

  it('validates a document before keeping it: one naming another client_id is a failure for failure_ttl, not a document for its max-age', async () => {
    const clock = new FrozenClock();
    const cache = documents(clock, { failure_ttl: '30s' });
    const url = `${origin}/foreign.json`;
    await expect(cache.get(url)).rejects.toThrow('names another client_id');
    await expect(cache.get(url)).rejects.toThrow('names another client_id');
    expect(hits('/foreign.json')).toBe(1);
    clock.advance(30_001);
    await expect(cache.get(url)).rejects.toThrow('names another client_id');
    expect(hits('/foreign.json')).toBe(2);
  });

  it('serves a valid document from the cache for its clamped max-age', async () => {
    const clock = new FrozenClock();
    const cache = documents(clock);
    const url = `${origin}/valid.json`;
    expect(await cache.get(url)).toEqual({ redirectUris: ['https://agent.example.com/cb'], logoUri: null });
    clock.advance(599_000);
    await cache.get(url);
    expect(hits('/valid.json')).toBe(1);
    clock.advance(2_000);
    await cache.get(url);
    expect(hits('/valid.json')).toBe(2);
  });
});
