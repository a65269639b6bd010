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
  if (type !== 'application/x-www-form-urlencoded')
    throw new OAuthError('invalid_request', 'the token request must be application/x-www-form-urlencoded');
  const text = body === undefined ? '' : body.toString('utf8');
  return formReading(formPairs(text) ?? new URLSearchParams(text));
}

function formReading(pairs: Iterable<readonly [string, string]>): TokenFormReading {
  const form = new Map<string, string>();
  // A Set, not `repeated.includes`: a 256 KiB form of distinct names each sent twice made
  // that lookup quadratic, about a second of blocked event loop per unauthenticated request.
  const repeated = new Set<string>();
  for (const [name, value] of pairs) {
    if (!form.has(name)) form.set(name, value);
    else repeated.add(name);
  }
  return { form, repeated: [...repeated] };
}

/**
 * The name-value pairs of an `application/x-www-form-urlencoded` body, as `URLSearchParams`
 * reads them (the WHATWG URL Standard's parser: `&`-separated, empty pieces skipped, split at
 * the first `=`, `+` as a space, then percent-decoded as UTF-8), in a third of its time on a
 * token request. Undefined when the body needs `URLSearchParams` itself: a leading `?` (which
 * it strips from a string) or a percent-encoding that is not well-formed UTF-8 (which it
 * keeps or replaces, where `decodeURIComponent` throws).
 */
export function formPairs(text: string): Array<[string, string]> | undefined {
  if (text.charCodeAt(0) === QUESTION_MARK) return undefined;
  const pairs: Array<[string, string]> = [];
  try {
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('&', start);
      if (end < 0) end = text.length;
      if (end > start) {
        // The `=` is looked for within the piece: a search past it would make a body of many pieces without one quadratic.
        const piece = text.slice(start, end);
        const equals = piece.indexOf('=');
        if (equals < 0) pairs.push([formDecoded(piece), '']);
        else pairs.push([formDecoded(piece.slice(0, equals)), formDecoded(piece.slice(equals + 1))]);
      }
      start = end + 1;
    }
  } catch (error) {
    if (error instanceof URIError) return undefined;
    throw error;
  }
  return pairs;
}

const QUESTION_MARK = 0x3f;
const PLUS = /\+/g;

/** A name or value: `+` is a space, then the percent-encodings as UTF-8 (URIError when not well formed). */
function formDecoded(part: string): string {
  const spaced = part.includes('+') ? part.replace(PLUS, ' ') : part;
  return spaced.includes('%') ? decodeURIComponent(spaced) : spaced;
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
