import { hasDotSegment, parseAbsoluteUrl } from './resource-uri';

/**
 * What a `*` of a `client_uris` pattern stands for: one whole path segment of RFC 3986
 * unreserved characters and sub-delimiters (§2.2, §2.3), never empty, never `.` or `..`, and
 * without percent-encoding, so an encoded dot, slash or backslash (`%2e%2e`, `%2F`, `%5C`)
 * cannot make the URL fetched leave the pattern.
 */
const WILDCARD_SEGMENT = /^[A-Za-z0-9\-._~!$&'()+,;=:@]+$/;

function isWildcardSegment(segment: string): boolean {
  return WILDCARD_SEGMENT.test(segment) && segment !== '.' && segment !== '..';
}

/** The `https://host[:port]` origin of a parsed URL, as the URL standard writes it. */
function originOf(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/**
 * Why an entry of an agent's `client_uris` is refused, or undefined when it is one: an https
 * URL with a path, its origin written as the URL standard writes it (lower-case host, no
 * default port) and fixed, so a `*` never stands for a host or port; no user info, fragment,
 * or dot segment (plain or percent-encoded); a `*` only as a whole path segment (one segment
 * of a document URL, see `matchesClientUri`). A Client ID Metadata Document URL is an https
 * URL with a path component and no dot segments (draft-ietf-oauth-client-id-metadata-document §3).
 */
export function clientUriProblem(value: string): string | undefined {
  const url = parseAbsoluteUrl(value);
  if (url === undefined || url.protocol !== 'https:' || url.hostname === '') return 'must be an https URL';
  const authority = value.slice('https://'.length).split(/[/?#]/, 1)[0] ?? '';
  if (authority.includes('*')) return 'may have a * only as a whole path segment, never in the host or port';
  if (url.username !== '' || url.password !== '') return 'must not carry user info';
  if (value.includes('#')) return 'must not have a fragment';
  const origin = originOf(url);
  if (!value.startsWith(`${origin}/`))
    return `must start with its origin written in normal form (${origin}) followed by a path`;
  if (hasDotSegment(value)) return 'must not have . or .. path segments (also percent-encoded)';
  // Stored as typed and compared with URLs in normal form: a path the parser would rewrite never matches.
  if (`${url.pathname}${url.search}` !== value.slice(origin.length))
    return 'must be written in the normal form of the URL standard';
  if (url.pathname.split('/').some((segment) => segment.includes('*') && segment !== '*') || url.search.includes('*'))
    return 'may have a * only as a whole path segment, never in the host or port';
  return undefined;
}

/**
 * A document URL a client may present as `client_id`: an https URL with a path in the normal
 * form of the URL standard (so no `.`/`..` segments, plain or percent-encoded, which the parser
 * would resolve; no user info, fragment, or characters it would escape). Only such a URL is
 * matched against `client_uris` and fetched, so the URL fetched is the URL matched.
 */
export function isClientDocumentUrl(value: string): boolean {
  const url = parseAbsoluteUrl(value);
  if (
    url === undefined ||
    url.protocol !== 'https:' ||
    url.hostname === '' ||
    url.username !== '' ||
    url.password !== '' ||
    value.includes('#')
  )
    return false;
  return url.href === value && !hasDotSegment(value);
}

/**
 * True when the document URL `url` is the `client_uris` entry `entry` (without `*`), or
 * matches it as a pattern: the same fixed https origin, as many path segments, each `*` one segment of
 * unreserved characters (`WILDCARD_SEGMENT`), the rest equal. Compared on the normalised URL
 * only (`isClientDocumentUrl`); an entry the admin API would refuse now (`clientUriProblem`:
 * a host wildcard, http, a dot segment) never matches, whenever it was stored.
 */
export function matchesClientUri(entry: string, url: string): boolean {
  if (!isClientDocumentUrl(url) || clientUriProblem(entry) !== undefined) return false;
  if (!entry.includes('*')) return entry === url;
  const target = new URL(url);
  const pattern = new URL(entry);
  if (target.origin !== pattern.origin || target.search !== pattern.search) return false;
  const want = pattern.pathname.split('/');
  const got = target.pathname.split('/');
  return (
    want.length === got.length &&
    want.every((segment, i) => (segment === '*' ? isWildcardSegment(got[i] ?? '') : segment === got[i]))
  );
}

/**
 * The host a redirect URI returns the browser to, as the consent page names it and a client
 * consent is remembered for: the lower-case host name without port (a loopback port varies,
 * RFC 8252 §7.3), or for an RFC 8252 private-use scheme (no host) the scheme itself.
 */
export function redirectHostOf(redirectUri: string): string {
  const url = parseAbsoluteUrl(redirectUri);
  if (url === undefined) return '';
  return url.hostname !== '' ? url.hostname : url.protocol.replace(/:$/, '');
}
