/**
 * Field names whose values are never logged: tokens, secrets, assertions,
 * authorization codes and key material (and the headers that carry them).
 */
const SECRET_FIELD =
  /(token|secret|assertion|password|passphrase|authorization|cookie|credential|private|verifier|^code$|_code$|^key$|_key$|^keys$|jwk|signature|ciphertext)/i;

export const REDACTED = '[REDACTED]';

/** True for a field name whose value must not reach a log line. */
export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name);
}

/**
 * A copy of `value` where every string or binary value held under a secret-named
 * field (at any depth, arrays included) is replaced. Objects under such names are
 * walked, not dropped, so `token_exchange: {...}` stays readable while
 * `access_token: "..."` does not. Error objects are left to the error serializer,
 * which keeps only safe fields.
 */
export function redactSecrets(value: unknown, secret = false, depth = 0): unknown {
  if (typeof value === 'string' || Buffer.isBuffer(value) || value instanceof Uint8Array)
    return secret ? REDACTED : value;
  if (depth > 8 || value === null || typeof value !== 'object' || value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, secret, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === 'err' ? child : redactSecrets(child, isSecretField(key), depth + 1);
  }
  return out;
}
