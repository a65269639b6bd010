import { describe, expect, it } from 'vitest';
import { isForbiddenAddress, networkList } from './special-use-addresses';

describe('isForbiddenAddress (the SSRF address guard)', () => {
  const none = networkList([]);

  it('refuses loopback, private, link-local, metadata and other special-use addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '198.18.0.1',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'not-an-ip',
    ]) {
      expect(isForbiddenAddress(address, none), address).toBe(true);
    }
  });

  it('refuses the IPv4-compatible range ::/96 (RFC 4291 §2.5.5.1) and site-local fec0::/10 (RFC 3879)', () => {
    for (const address of [
      '::7f00:1',
      '::127.0.0.1',
      '::a00:1',
      '::a9fe:a9fe',
      '::808:808',
      '::2',
      '::ffff',
      'fec0::1',
      'fec0:0:0:ffff::1',
      'feff:ffff::1',
    ]) {
      expect(isForbiddenAddress(address, none), address).toBe(true);
    }
  });

  it('judges IPv4-mapped ::ffff:0:0/96 as IPv4 and keeps :: and ::1 refused alongside ::/96', () => {
    for (const address of ['::ffff:8.8.8.8', '::ffff:808:808', '::1:0:0', 'fe00::1', 'fbff::1'])
      expect(isForbiddenAddress(address, none), address).toBe(false);
    for (const address of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::', '::1'])
      expect(isForbiddenAddress(address, none), address).toBe(true);
    const loopbackOnly = networkList(['::1/128']);
    expect(isForbiddenAddress('::1', loopbackOnly)).toBe(false);
    expect(isForbiddenAddress('::7f00:1', loopbackOnly)).toBe(true);
    expect(isForbiddenAddress('::', loopbackOnly)).toBe(true);
  });

  it('allows public addresses, and special-use ones only when allow-listed', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111'])
      expect(isForbiddenAddress(address, none), address).toBe(false);
    expect(isForbiddenAddress('127.0.0.1', networkList(['127.0.0.1/32']))).toBe(false);
    expect(isForbiddenAddress('127.0.0.2', networkList(['127.0.0.1/32']))).toBe(true);
  });
});
