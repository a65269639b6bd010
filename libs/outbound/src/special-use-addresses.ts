import { BlockList, isIP } from 'node:net';

/**
 * Addresses an outbound call whose target someone outside the broker chose may never reach
 * (SSRF; `AddressGuardPolicy`): loopback, private, link-local (cloud metadata
 * 169.254.169.254), shared, documentation, benchmark, multicast and other special-use
 * ranges (RFC 6890 registries), in IPv4 and IPv6.
 */
const SPECIAL_USE_V4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const;
// ::/96 is the deprecated IPv4-compatible range (RFC 4291 §2.5.5.1: ::a.b.c.d, which a host may
// route as the IPv4 address); it holds :: and ::1, listed on their own for the reader. IPv4-mapped
// ::ffff:0:0/96 is outside it and judged as IPv4 (isForbiddenAddress, BlockList). fec0::/10 is
// site-local (deprecated by RFC 3879, still routed inside some networks).
const SPECIAL_USE_V6 = [
  ['::', 128],
  ['::1', 128],
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const;

const forbidden = new BlockList();
for (const [address, prefix] of SPECIAL_USE_V4) forbidden.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of SPECIAL_USE_V6) forbidden.addSubnet(address, prefix, 'ipv6');

/**
 * An allow-list of CIDRs exempt from the guard (`oauth2_authorization_server.cimd.allowed_networks`,
 * `third_party_oauth2.discovery.allowed_networks`; for tests), for `AddressGuardPolicy.allowed`.
 */
export function networkList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, prefix === undefined ? (family === 'ipv4' ? 32 : 128) : Number(prefix), family);
  }
  return list;
}

/** True when `address` is special-use and not allow-listed (or not an IP address); IPv4-mapped IPv6 is judged as IPv4. */
export function isForbiddenAddress(address: string, allowed: BlockList): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? (mapped[1] as string) : address;
  const family = isIP(ip);
  if (family === 0) return true;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (allowed.check(ip, type)) return false;
  return forbidden.check(ip, type);
}
