import { describe, expect, it } from 'vitest';
import { isForbiddenAddress, networkList } from './special-use-addresses';

describe('isForbiddenAddress (the SSRF address guard)', () => {
  const none = networkList([]);

  it('refuses loopback, private, link-local, metadata and other special-use addresses', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '198.18.0.1', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip']) {
      expect(isForbiddenAddress(address, none), address).toBe(true);
    }
  });

  it('allows public addresses, and special-use ones only when allow-listed', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) expect(isForbiddenAddress(address, none), address).toBe(false);
    expect(isForbiddenAddress('127.0.0.1', networkList(['127.0.0.1/32']))).toBe(false);
    expect(isForbiddenAddress('127.0.0.2', networkList(['127.0.0.1/32']))).toBe(true);
  });
});
