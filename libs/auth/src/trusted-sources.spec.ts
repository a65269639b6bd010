import { describe, expect, it } from 'vitest';
import { TrustedSources } from './trusted-sources';

describe('TrustedSources', () => {
  it('trusts loopback by the default CIDRs, including IPv4-mapped IPv6 peers', () => {
    const trusted = new TrustedSources(['127.0.0.1/32', '::1/128']);
    expect(trusted.includes('127.0.0.1')).toBe(true);
    expect(trusted.includes('::ffff:127.0.0.1')).toBe(true);
    expect(trusted.includes('::1')).toBe(true);
    expect(trusted.includes('127.0.0.2')).toBe(false);
    expect(trusted.includes('10.0.0.1')).toBe(false);
  });

  it('matches subnets and rejects a missing or malformed peer address', () => {
    const trusted = new TrustedSources(['10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
    expect(trusted.includes('10.200.3.4')).toBe(true);
    expect(trusted.includes('fd12::1')).toBe(true);
    expect(trusted.includes('192.0.2.7')).toBe(true);
    expect(trusted.includes('192.0.2.8')).toBe(false);
    expect(trusted.includes(undefined)).toBe(false);
    expect(trusted.includes('not-an-ip')).toBe(false);
  });
});
