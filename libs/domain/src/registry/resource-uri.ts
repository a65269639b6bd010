/**
 * Normal form of a protected-resource URI (SPEC.md "Third-party service"): absolute
 * http(s), scheme and host lower-cased and the default port dropped (WHATWG URL), no
 * fragment (RFC 8707 §2), no user info, trailing slashes removed. Two URIs name the same
 * resource exactly when their normal forms are equal; never a prefix match.
 * Returns undefined when the value is not such a URI.
 */
export function normaliseResourceUri(value: string): string | undefined {
  if (/\s/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '' || url.username !== '' || url.password !== '' || value.includes('#')) return undefined;
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/** True for an absolute http(s) URL (consent links, logos, documentation). */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A redirect URI: absolute, any scheme (native apps use private-use schemes, RFC 8252), no fragment (RFC 6749 §3.1.2). */
export function isRedirectUri(value: string): boolean {
  if (value.includes('#') || /\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol);
  } catch {
    return false;
  }
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
