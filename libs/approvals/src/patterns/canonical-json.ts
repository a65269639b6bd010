import { createHash } from 'node:crypto';

/**
 * The canonical JSON text of a parsed JSON value: object keys sorted by UTF-16 code units,
 * no whitespace, strings and numbers serialised as `JSON.stringify` does. For JSON values
 * this is RFC 8785 (JCS), so a gateway can compute the same `arguments_hash` with any JCS
 * library.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`)
    .join(',')}}`;
}

/** `arguments_hash` = SHA-256 hex of the canonical JSON (sorted keys) of `arguments`. */
export function argumentsHash(args: Readonly<Record<string, unknown>>): string {
  return createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex');
}
