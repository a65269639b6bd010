import { OAuthError } from '@broker/domain';
import { parseScope } from '../token/scopes';
import type { TokenForm } from '../token/token-form';

/**
 * The backchannel authentication request's parameters (OpenID CIBA Core 1.0 §7.1), one function
 * per rule, called in the endpoint's order of checks (docs/ciba.md "The endpoint").
 */

/** Parameters of CIBA §7.1 this server does not take; each present is refused naming it. */
export const UNSUPPORTED_PARAMETERS: readonly string[] = ['request', 'login_hint_token', 'id_token_hint', 'user_code'];

/** The most UTF-8 bytes of `authorization_details` (the route's body may be larger: it still answers RFC 9396 §5's error). */
export const MAX_AUTHORIZATION_DETAILS_BYTES = 64 * 1024;

/** CIBA §7.1: the longest `binding_message` shown to the person (characters). */
export const MAX_BINDING_MESSAGE_CHARS = 100;

/** The longest `login_hint` looked at; a longer one names nobody. */
export const MAX_LOGIN_HINT_CHARS = 1024;

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * CIBA §7.1: signed requests, `login_hint_token`, `id_token_hint` and `user_code` are not
 * supported (the metadata says `backchannel_user_code_parameter_supported: false`); exactly
 * `login_hint` names the person.
 */
export function assertSupportedParameters(form: TokenForm): void {
  for (const name of UNSUPPORTED_PARAMETERS)
    if (form.has(name))
      throw new OAuthError('invalid_request', `${name} is not supported: name the person with login_hint`);
  if ((form.get('login_hint') ?? '') === '') throw new OAuthError('invalid_request', 'login_hint is required');
}

/** RFC 9396 §2: the `authorization_details` text, REQUIRED here, at most 64 KiB of UTF-8 (else RFC 9396 §5's error). */
export function authorizationDetailsText(form: TokenForm): string {
  const text = form.get('authorization_details');
  if (text === undefined || text === '')
    throw new OAuthError(
      'invalid_request',
      'authorization_details is required: the tool call the person is asked about',
    );
  // A UTF-8 character is at most 3 bytes per UTF-16 unit: the byte count is needed only near the limit.
  if (
    text.length * 3 > MAX_AUTHORIZATION_DETAILS_BYTES &&
    Buffer.byteLength(text, 'utf8') > MAX_AUTHORIZATION_DETAILS_BYTES
  )
    throw new OAuthError('invalid_authorization_details', 'authorization_details is larger than 64 KiB');
  return text;
}

/**
 * RFC 6749 §3.3 `scope`, optional. This server issues no ID token, so `openid` (CIBA §7.1's
 * usual scope) is refused rather than ignored: the tool call is asked in `authorization_details`.
 */
export function requestedScopes(form: TokenForm): string[] {
  const scopes = parseScope(form.get('scope'));
  if (scopes.includes('openid'))
    throw new OAuthError(
      'invalid_scope',
      'this server issues no ID tokens; ask for the tool call in authorization_details',
    );
  return scopes;
}

/** CIBA §7.1 `binding_message`, optional: 1-100 characters without control characters, else §13 `invalid_binding_message`. */
export function bindingMessage(form: TokenForm): string | undefined {
  const message = form.get('binding_message');
  if (message === undefined) return undefined;
  const characters = [...message].length;
  if (characters === 0 || characters > MAX_BINDING_MESSAGE_CHARS)
    throw new OAuthError('invalid_binding_message', 'binding_message must be 1-100 characters');
  if (CONTROL.test(message))
    throw new OAuthError('invalid_binding_message', 'binding_message must not contain control characters');
  return message;
}

const WHOLE_SECONDS = /^[1-9][0-9]{0,9}$/;

/**
 * CIBA §7.1 `requested_expiry`: a positive whole number of seconds, at most `maxMs`, else
 * `invalid_request`; absent, `defaultMs`. The request's lifetime in milliseconds.
 */
export function requestedExpiryMs(form: TokenForm, defaultMs: number, maxMs: number): number {
  const value = form.get('requested_expiry');
  if (value === undefined) return defaultMs;
  if (!WHOLE_SECONDS.test(value))
    throw new OAuthError('invalid_request', 'requested_expiry must be a positive whole number of seconds');
  const ms = Number(value) * 1000;
  if (ms > maxMs)
    throw new OAuthError('invalid_request', `requested_expiry must be at most ${Math.floor(maxMs / 1000)} seconds`);
  return ms;
}

/** The `login_hint` (present: `assertSupportedParameters` ran), or undefined when too long to name anyone. */
export function loginHint(form: TokenForm): string | undefined {
  const hint = form.get('login_hint');
  return hint === undefined || hint.length > MAX_LOGIN_HINT_CHARS ? undefined : hint;
}
