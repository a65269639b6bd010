/**
 * Normal form of a protected-resource URI (docs/admin-api.md): absolute
 * http(s), scheme and host lower-cased and the default port dropped (WHATWG URL), no
 * fragment (RFC 8707 §2), no user info, trailing slashes removed. Two URIs name the same
 * resource exactly when their normal forms are equal; never a prefix match.
 * Returns undefined when the value is not such a URI.
 */
export function normaliseResourceUri(value: string): string | undefined {
  if (/\s/.test(value)) return undefined;
  const url = parseAbsoluteUrl(value);
  if (url === undefined) return undefined;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '' || url.username !== '' || url.password !== '' || value.includes('#')) return undefined;
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/** A `.` or `..` path segment, also percent-encoded (`%2e`, any case; RFC 3986 §3.3, §5.2.4). */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/**
 * True when the URI's path has a `.` or `..` segment, written plainly or percent-encoded
 * (RFC 3986 §5.2.4 removes them, and the WHATWG URL parser decodes `%2e` for it): a prefix or
 * pattern matched on the string could otherwise be left by the URL actually used.
 */
export function hasDotSegment(value: string): boolean {
  return DOT_SEGMENT.test(value);
}

/** The value as an absolute URL (WHATWG URL parser), or undefined when it is not one. */
export function parseAbsoluteUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** Options of {@link isHttpUrl}. */
export interface HttpUrlOptions {
  /** False: refuse `user:password@` (URLs written in the configuration carry no credentials). Default true. */
  readonly userInfo?: boolean;
}

/**
 * The one http(s) URL check: an absolute `http:` or `https:` URL with a host (consent links,
 * logos, documentation, discovered endpoints, configured URLs and issuers). Stricter rules
 * (`isHttpsOrLoopbackUrl`, `isRedirectUri`, `normaliseResourceUri`) are their own functions.
 */
export function isHttpUrl(value: string | URL, options: HttpUrlOptions = {}): boolean {
  const url = typeof value === 'string' ? parseAbsoluteUrl(value) : value;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return false;
  return options.userInfo !== false || (url.username === '' && url.password === '');
}

/** White space or a control character: the URL parser would drop or encode it, so the stored string and the target differ. */
function hasSpaceOrControl(value: string): boolean {
  return /\s/.test(value) || [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

/** A loopback host: `localhost`, an IPv4 literal in 127.0.0.0/8, or `[::1]` (WHATWG URL forms). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * RFC 8252 §7.1: a private-use scheme is a reverse-domain name, so it contains a dot
 * (`com.example.app`). Schemes without one (`javascript`, `data`, `vbscript`, `file`,
 * `blob`, `about`, `mailto`…) are the browser's or the system's, never an app's callback.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/**
 * A redirect URI the broker may send a browser to (RFC 6749 §3.1.2, RFC 8252 §7, OAuth 2.1
 * §2.3.1): absolute, no fragment, and either `https:`, `http:` on a loopback host only, or
 * an RFC 8252 private-use scheme. Anything a browser would run or read locally
 * (`javascript:`, `data:`, `vbscript:`, `file:`…) is refused.
 */
export function isRedirectUri(value: string): boolean {
  if (value.includes('#') || hasSpaceOrControl(value)) return false;
  const url = parseAbsoluteUrl(value);
  if (url === undefined) return false;
  if (url.protocol === 'https:') return url.hostname !== '';
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname);
  return PRIVATE_USE_SCHEME.test(url.protocol);
}

/**
 * A URL shown or loaded by the consent page (a logo, documentation, the agent's interface):
 * `https:`, or `http:` on a loopback host (development). Nothing else becomes an `href` or
 * `src`.
 */
export function isHttpsOrLoopbackUrl(value: string): boolean {
  if (hasSpaceOrControl(value)) return false;
  const url = parseAbsoluteUrl(value);
  if (url === undefined) return false;
  if (url.protocol === 'https:') return url.hostname !== '';
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** Most entries of an agent's `allowed_resources` (docs/admin-api.md). */
export const MAX_AGENT_ALLOWED_RESOURCES = 100;

/**
 * An entry of a resource-indicator list (RFC 8707): the configured
 * `local.resource_indicators.allowed_resources` and an agent's `allowed_resources`. An
 * absolute URI without fragment, user info or white space, matched exactly; one ending in `/`
 * is a prefix and must then be http(s) with a host and start with its origin as the URL
 * standard writes it, so that a prefix never spans two origins.
 */
export function isResourceIndicatorEntry(value: string): boolean {
  if (value.includes('#') || hasSpaceOrControl(value)) return false;
  const url = parseAbsoluteUrl(value);
  if (url === undefined || url.username !== '' || url.password !== '') return false;
  return (
    !value.endsWith('/') ||
    ((url.protocol === 'https:' || url.protocol === 'http:') &&
      url.hostname !== '' &&
      value.startsWith(`${url.protocol}//${url.host}/`))
  );
}

const CANONICAL_ID = /^[A-Za-z0-9._-]{1,128}$/;
const UUID_SHAPED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An agent's canonical id: 1-128 of `[A-Za-z0-9._-]` and not UUID-shaped, so an
 * impersonation audience suffix is unambiguously either a UUID or a canonical id.
 */
export function canonicalIdProblem(value: string): string | undefined {
  if (!CANONICAL_ID.test(value)) return 'must be 1-128 characters of A-Z a-z 0-9 . _ -';
  if (UUID_SHAPED.test(value)) return 'must not be shaped like a UUID';
  return undefined;
}
