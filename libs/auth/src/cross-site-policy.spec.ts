import { testConfig } from '@broker/testing';
import { describe, expect, it } from 'vitest';
import { CrossSiteRequestPolicy, allowedOrigins } from './cross-site-policy';

const refusal = (
  policy: CrossSiteRequestPolicy,
  method: string,
  headers: Record<string, string>,
  originRequired = false,
): string | undefined => {
  try {
    policy.assertAllowed(method, headers, originRequired);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('CrossSiteRequestPolicy', () => {
  const policy = new CrossSiteRequestPolicy(['https://broker.example.com', 'https://consent.example.com']);

  it('refuses an unsafe request whose Origin is foreign or null, and names the origin', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'post']) {
      expect(refusal(policy, method, { origin: 'https://evil.example' })).toBe(
        'cross-site request refused: origin https://evil.example is not allowed',
      );
    }
    expect(refusal(policy, 'POST', { origin: 'null' })).toBe('cross-site request refused: origin null is not allowed');
    // A look-alike is not the origin: compared exactly, scheme and port included.
    expect(refusal(policy, 'POST', { origin: 'http://broker.example.com' })).toBeDefined();
    expect(refusal(policy, 'POST', { origin: 'https://broker.example.com:8443' })).toBeDefined();
    expect(refusal(policy, 'POST', { origin: 'https://broker.example.com.evil.example' })).toBeDefined();
  });

  it('never echoes an Origin that is not shaped like an origin', () => {
    expect(refusal(policy, 'POST', { origin: '<script>alert(1)</script>' })).toBe(
      'cross-site request refused: origin (malformed) is not allowed',
    );
    expect(refusal(policy, 'POST', { origin: '' })).toBe(
      'cross-site request refused: origin (malformed) is not allowed',
    );
  });

  it('lets an allowed Origin through, even when the browser calls the request cross-site', () => {
    expect(
      refusal(policy, 'DELETE', { origin: 'https://consent.example.com', 'sec-fetch-site': 'cross-site' }),
    ).toBeUndefined();
    expect(refusal(policy, 'POST', { origin: 'https://broker.example.com' })).toBeUndefined();
  });

  it('without an Origin refuses only Sec-Fetch-Site: cross-site', () => {
    expect(refusal(policy, 'POST', { 'sec-fetch-site': 'cross-site' })).toBe(
      'cross-site request refused: Sec-Fetch-Site is cross-site and no allowed Origin was sent',
    );
    expect(refusal(policy, 'POST', { 'sec-fetch-site': 'Cross-Site' })).toBeDefined();
    for (const site of ['same-origin', 'same-site', 'none'])
      expect(refusal(policy, 'POST', { 'sec-fetch-site': site })).toBeUndefined();
    expect(refusal(policy, 'POST', {})).toBeUndefined();
  });

  it('requires an Origin when asked to (a request authenticated only by the session cookie)', () => {
    expect(refusal(policy, 'DELETE', {}, true)).toMatch(
      /^a request authenticated by the session cookie must carry the Origin/,
    );
    expect(refusal(policy, 'DELETE', { origin: 'https://consent.example.com' }, true)).toBeUndefined();
    expect(refusal(policy, 'GET', {}, true)).toBeUndefined();
  });

  it('leaves safe methods alone', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS'])
      expect(
        refusal(policy, method, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }),
      ).toBeUndefined();
  });
});

describe('allowedOrigins', () => {
  it('end-user: the public URL, the consent UI and the CORS origins, as origins', () => {
    const config = testConfig({
      server: {
        enduser: {
          public_url: 'https://broker.example.com/base/',
          consent_ui_url: 'https://consent.example.com/ui',
          cors: { allowed_origins: ['https://console.example.com'] },
        },
      },
    });
    expect(allowedOrigins(config, 'enduser')).toEqual([
      'https://broker.example.com',
      'https://consent.example.com',
      'https://console.example.com',
    ]);
  });

  it('admin: the admin public URL and server.admin.allowed_origins (one or a list)', () => {
    expect(
      allowedOrigins(testConfig({ server: { admin: { public_url: 'https://admin.example.com:9443/x' } } }), 'admin'),
    ).toEqual(['https://admin.example.com:9443']);
    expect(
      allowedOrigins(
        testConfig({ server: { admin: { allowed_origins: 'https://console.example.com/admin' } } }),
        'admin',
      ),
    ).toEqual(['http://localhost:14000', 'https://console.example.com']);
  });
});
