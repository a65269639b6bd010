import { OAuthError } from '@broker/domain';

/** The parsed form of a token request: every parameter at most once (RFC 6749 §3.2). */
export type TokenForm = ReadonlyMap<string, string>;

/**
 * Parses `application/x-www-form-urlencoded` (RFC 6749 §4.1.3): another content type,
 * or a parameter sent twice, is `invalid_request`. The 256 KiB limit is enforced before
 * this, while reading the body.
 */
export function parseTokenForm(contentType: string | undefined, body: Buffer | undefined): TokenForm {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'the token request must be application/x-www-form-urlencoded');
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams((body ?? Buffer.alloc(0)).toString('utf8'))) {
    if (form.has(name)) throw new OAuthError('invalid_request', `parameter ${name.replace(/[^\x20-\x7E]/g, '?').slice(0, 64)} is repeated`);
    form.set(name, value);
  }
  return form;
}

/** A required parameter, or `invalid_request` naming it. */
export function required(form: TokenForm, name: string): string {
  const value = form.get(name);
  if (value === undefined || value === '') throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
