import { networkList } from '@broker/outbound';
import { describe, expect, it } from 'vitest';
import { CimdFetcher } from './cimd-fetcher';

describe('CimdFetcher SSRF guard at connect time', () => {
  it('refuses a name that resolves to a private address (10.x), before any connection', async () => {
    const resolved: string[] = [];
    const fetcher = new CimdFetcher({
      timeoutMs: 1_000,
      maxBytes: 1024,
      allowed: networkList([]),
      lookup: (hostname, _options, callback) => {
        resolved.push(hostname);
        callback(null, [{ address: '10.0.0.5', family: 4 }]);
      },
    });
    await expect(fetcher.fetch('https://internal.example.com/client.json')).rejects.toThrow(
      'the client metadata document host is not allowed',
    );
    expect(resolved).toEqual(['internal.example.com']);
  });

  it('refuses plain http', async () => {
    const fetcher = new CimdFetcher({ timeoutMs: 1_000, maxBytes: 1024, allowed: networkList([]) });
    await expect(fetcher.fetch('http://example.com/client.json')).rejects.toThrow('must be served over https');
  });
});
