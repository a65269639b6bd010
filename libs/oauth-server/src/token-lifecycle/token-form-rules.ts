import { readTokenForm, repeatedParameter, required, type TokenForm } from '../token/token-form';

/** A revocation or introspection request's form: each parameter once (RFC 6749 §3.2), `token` required. */
export interface TokenRequestForm {
  readonly form: TokenForm;
  readonly token: () => string;
}

/** Reads the form; a repeated parameter is `invalid_request` (before client authentication, as at the token endpoint). */
export function readTokenRequestForm(contentType: string | undefined, body: Buffer | undefined): TokenRequestForm {
  const { form, repeated } = readTokenForm(contentType, body);
  const first = repeated[0];
  if (first !== undefined) throw repeatedParameter(first);
  return { form, token: () => required(form, 'token') };
}

/**
 * Our access tokens are compact JWS (three dot-separated parts); our refresh tokens are
 * opaque base64url, without a dot. So the token's form says where to look, and
 * `token_type_hint` (RFC 7009 §2.1, RFC 7662 §2.1: only a hint) is not needed.
 */
export function looksLikeJwt(token: string): boolean {
  return token.split('.').length === 3;
}
