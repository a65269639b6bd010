import { z } from 'zod';

/**
 * A list-valued key that also takes its natural single-value form: `audience:
 * https://broker.example.com` means `audience: [https://broker.example.com]`, as a JWT's own
 * `aud` may be a string or an array (RFC 7519 §4.1.3). One helper for every such key, so
 * none of them is a special case. A scalar that fails the item check is reported at the
 * key itself (see `load-config.ts`), not at an index the operator never wrote.
 */
export function oneOrMany<T extends z.ZodType>(item: T, error: string) {
  return z.preprocess(
    (value) => (value === undefined || value === null || Array.isArray(value) ? value : [value]),
    z.array(item, { error }),
  );
}

/**
 * An issue's path as the operator wrote it: a one-or-many key given as a single value
 * was wrapped in a list by `oneOrMany`, so its implicit `[0]` is dropped.
 */
export function writtenPath(input: unknown, path: readonly PropertyKey[]): PropertyKey[] {
  const written: PropertyKey[] = [];
  for (const segment of path) {
    const parent = valueAt(input, written);
    if (segment === 0 && parent !== undefined && parent !== null && !Array.isArray(parent)) continue;
    written.push(segment);
  }
  return written;
}

/** The value at `path` in a parsed YAML document, or undefined. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}
