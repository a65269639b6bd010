import { OAuthError } from '@broker/domain';

/** The parsed form of a token request: each parameter's (first) value. */
export type TokenForm = ReadonlyMap<string, string>;

/** The form as read: each parameter's first value, and the names that were sent more than once. */
export interface TokenFormReading {
  readonly form: TokenForm;
  readonly repeated: readonly string[];
}

/**
 * Reads `application/x-www-form-urlencoded` (RFC 6749 §4.1.3); another content type is
 * `invalid_request`. Repeated parameters are reported, not yet refused, so the grant the
 * request was meant for can record its refusal (audit) before `repeatedParameter` is thrown.
 * The 256 KiB limit is enforced before this, while reading the body.
 */
export function readTokenForm(contentType: string | undefined, body: Buffer | undefined): TokenFormReading {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'the token request must be application/x-www-form-urlencoded');
  const form = new Map<string, string>();
  // A Set, not `repeated.includes`: a 256 KiB form of distinct names each sent twice made
  // that lookup quadratic, about a second of blocked event loop per unauthenticated request.
  const repeated = new Set<string>();
  for (const [name, value] of new URLSearchParams((body ?? Buffer.alloc(0)).toString('utf8'))) {
    if (!form.has(name)) form.set(name, value);
    else repeated.add(name);
  }
  return { form, repeated: [...repeated] };
}

/** RFC 6749 §3.2: a parameter sent twice is `invalid_request`. */
export function repeatedParameter(name: string): OAuthError {
  return new OAuthError('invalid_request', `parameter ${name.replace(/[^\x20-\x7E]/g, '?').slice(0, 64)} is repeated`);
}

/** A required parameter, or `invalid_request` naming it. */
export function required(form: TokenForm, name: string): string {
  const value = form.get(name);
  if (value === undefined || value === '') throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
