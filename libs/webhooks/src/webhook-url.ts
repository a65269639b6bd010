import { lookup } from 'node:dns/promises';
import { isIP, type BlockList } from 'node:net';
import { isForbiddenAddress } from '@broker/outbound';

async function addressesOf(host: string): Promise<string[] | undefined> {
  if (isIP(host) !== 0) return [host];
  try {
    return (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return undefined;
  }
}

function isAllowListed(address: string, allowed: BlockList): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? (mapped[1] as string) : address;
  return allowed.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The rules a webhook URL meets when an admin writes it (undefined when
 * it does). `https`, or `http` only to hosts inside `events.webhooks.allowed_networks`
 * (a receiver on a test or internal network); no user info (credentials do not belong in
 * a URL the admin API shows). The host may not be or resolve to a special-use address
 * (loopback, private, link-local: the SSRF rules of `OutboundHttp`'s address guard)
 * unless allow-listed. A name that does not resolve now is accepted over https: every
 * delivery resolves again and the address guard judges the address it connects to, so
 * this check is an early answer to the admin, and the guard at delivery is the rule.
 */
export async function webhookUrlProblem(url: string, allowed: BlockList): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an https URL';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain user info';
  if (parsed.hash !== '') return 'must not contain a fragment';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = await addressesOf(host);
  if (parsed.protocol === 'http:') {
    if (addresses === undefined || addresses.length === 0 || !addresses.every((a) => isAllowListed(a, allowed)))
      return 'must be an https URL (http only to events.webhooks.allowed_networks)';
    return undefined;
  }
  if (addresses?.some((a) => isForbiddenAddress(a, allowed)))
    return 'resolves to a loopback, private, link-local or other special-use address (not in events.webhooks.allowed_networks)';
  return undefined;
}
