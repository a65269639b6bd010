import { randomUUID } from 'node:crypto';
import type { ProtectedResource } from '@broker/domain';
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
    const catalog = new ResourceCatalog();
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
    const catalog = new ResourceCatalog();
    const load = (): Promise<ProtectedResource[]> => Promise.resolve([resource('https://mcp.example.com/mcp')]);
    expect(await catalog.byUri('https://mcp.example.com/mcp/', 0, load)).toBeUndefined();
    expect(await catalog.byUri('https://MCP.example.com/mcp', 0, load)).toBeUndefined();
  });

  it('loads once for concurrent lookups', async () => {
    const catalog = new ResourceCatalog();
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

  it('forgets the snapshot on invalidate, and does not keep a load that raced a write', async () => {
    const catalog = new ResourceCatalog();
    await catalog.byUri('https://a.example.com', 0, () => Promise.resolve([resource('https://a.example.com')]));
    catalog.invalidate();
    expect(await catalog.byUri('https://a.example.com', 0, () => Promise.resolve([]))).toBeUndefined();

    let release: () => void = () => undefined;
    const slow = catalog.byUri(
      'https://b.example.com',
      0,
      () => new Promise<ProtectedResource[]>((resolve) => (release = () => resolve([]))),
    ); // read before the write
    catalog.invalidate(); // the write commits while the read is in flight
    release();
    expect(await slow).toBeUndefined();
    expect(
      (await catalog.byUri('https://b.example.com', 0, () => Promise.resolve([resource('https://b.example.com')])))
        ?.resourceUri,
    ).toBe('https://b.example.com');
  });

  it('loads again after a failed load', async () => {
    const catalog = new ResourceCatalog();
    await expect(
      catalog.byUri('https://a.example.com', 0, () => Promise.reject(new Error('database down'))),
    ).rejects.toThrow('database down');
    expect(
      (await catalog.byUri('https://a.example.com', 0, () => Promise.resolve([resource('https://a.example.com')])))
        ?.resourceUri,
    ).toBe('https://a.example.com');
  });
});
