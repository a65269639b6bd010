import { BlockList, isIP } from 'node:net';

/**
 * The CIDR allow-list of peers whose principal header is believed
 * (`server.<kind>.authentication.preauth.trusted_sources`). Built once at boot.
 */
export class TrustedSources {
  private readonly list = new BlockList();

  constructor(cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const [address, prefix] = cidr.split('/') as [string, string | undefined];
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      this.list.addSubnet(address, prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix), family);
    }
  }

  /** True when the TCP peer address lies inside one of the trusted CIDRs. */
  includes(peer: string | undefined): boolean {
    if (peer === undefined) return false;
    // An IPv4 client on a dual-stack socket appears as ::ffff:a.b.c.d.
    const address = peer.startsWith('::ffff:') && isIP(peer.slice(7)) === 4 ? peer.slice(7) : peer;
    const family = isIP(address);
    if (family === 0) return false;
    return this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}
