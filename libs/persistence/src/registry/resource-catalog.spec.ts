import { randomUUID } from 'node:crypto';
import type { ProtectedResource } from '@broker/domain';
import type { BrokerMetrics, CacheName } from '@broker/telemetry';
import { describe, expect, it } from 'vitest';
import { RESOURCE_CATALOG_TTL_MS, ResourceCatalog } from './resource-catalog';

function resource(uri: string): ProtectedResource {
  return {
    id: randomUUID(),
    displayName: uri,
    description: null,
    logoUrl: null,
    resourceUri: uri,
    scopes: [],
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
}

describe('ResourceCatalog', () => {
  it('answers every URI from one load of the table until the 5 s backstop passes, then loads it again', async () => {
    const catalog = new ResourceCatalog(undefined);
    let loads = 0;
    const load = (): Promise<ProtectedResource[]> => {
      loads += 1;
      return Promise.resolve([resource('https://mcp.example.com/mcp'), resource('https://files.example.com/')]);
    };
    const t0 = Date.UTC(2026, 2, 1);
    expect((await catalog.byUri('https://mcp.example.com/mcp', t0, load))?.resourceUri).toBe(
      'https://mcp.example.com/mcp',
    );
    expect((await catalog.byUri('https://files.example.com/', t0 + 1, load))?.resourceUri).toBe(
      'https://files.example.com/',
    );
    expect(await catalog.byUri('https://unknown.example.com', t0 + RESOURCE_CATALOG_TTL_MS - 1, load)).toBeUndefined();
    expect(loads).toBe(1);
    await catalog.byUri('https://mcp.example.com/mcp', t0 + RESOURCE_CATALOG_TTL_MS, load);
    expect(loads).toBe(2);
  });

  it('compares URIs exactly as sent (RFC 8707 §2): no normalisation', async () => {
    const catalog = new ResourceCatalog(undefined);
    const load = (): Promise<ProtectedResource[]> => Promise.resolve([resource('https://mcp.example.com/mcp')]);
    expect(await catalog.byUri('https://mcp.example.com/mcp/', 0, load)).toBeUndefined();
    expect(await catalog.byUri('https://MCP.example.com/mcp', 0, load)).toBeUndefined();
  });

  it('loads once for concurrent lookups', async () => {
    const catalog = new ResourceCatalog(undefined);
    let loads = 0;
    const load = async (): Promise<ProtectedResource[]> => {
      loads += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return [resource('https://a.example.com')];
    };
    const found = await Promise.all(Array.from({ length: 10 }, () => catalog.byUri('https://a.example.com', 0, load)));
    expect(found.every((r) => r?.resourceUri === 'https://a.example.com')).toBe(true);
    expect(loads).toBe(1);
  });

  it('forgets the snapshot on invalidate (a write here), and counts its lookups as resource_catalog', async () => {
    const catalog = new ResourceCatalog(undefined);
    const counted: string[] = [];
    catalog.metrics = {
      cacheLookup: (cache: CacheName, hit: boolean) => counted.push(`${cache} ${hit ? 'hit' : 'miss'}`),
    } as unknown as BrokerMetrics;
    await catalog.byUri('https://a.example.com', 0, () => Promise.resolve([resource('https://a.example.com')]));
    expect(await catalog.byUri('https://b.example.com', 0, () => Promise.resolve([]))).toBeUndefined();
    catalog.invalidate();
    expect(
      (await catalog.byUri('https://b.example.com', 0, () => Promise.resolve([resource('https://b.example.com')])))
        ?.resourceUri,
    ).toBe('https://b.example.com');
    expect(counted).toEqual(['resource_catalog miss', 'resource_catalog hit', 'resource_catalog miss']);
  });
});
