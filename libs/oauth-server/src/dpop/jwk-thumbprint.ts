import { createHash } from 'node:crypto';

/** RFC 7638 §3.2: the members a thumbprint covers, per key type, in lexicographic order. */
const REQUIRED_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};

/**
 * The JSON a key's thumbprint is the hash of (RFC 7638 §3.1-3.3): the required members of its
 * `kty` only, in lexicographic order, without white space; undefined when one is missing or
 * not a string, or the key type is not an asymmetric one we verify.
 */
export function thumbprintInput(jwk: Readonly<Record<string, unknown>>): string | undefined {
  const kty = jwk.kty;
  const members = typeof kty === 'string' ? REQUIRED_MEMBERS[kty] : undefined;
  if (members === undefined) return undefined;
  const canonical: Record<string, string> = {};
  for (const member of members) {
    const value = jwk[member];
    if (typeof value !== 'string' || value === '') return undefined;
    canonical[member] = value;
  }
  return JSON.stringify(canonical);
}

/** RFC 7638 with SHA-256, base64url: the `jkt` of RFC 9449 §6.1 and the `dpop_jkt` of §10. */
export function sha256Thumbprint(input: string): string {
  return createHash('sha256').update(input, 'utf8').digest('base64url');
}

/** A `jkt`/`dpop_jkt` value's shape: the base64url of a SHA-256 (43 characters, no padding). */
export const JKT = /^[A-Za-z0-9_-]{43}$/;
