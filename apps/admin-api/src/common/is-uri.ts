import { ValidateBy, type ValidationOptions } from 'class-validator';

/* RFC 3986 Appendix A, spelled out once. */
const PCT_ENCODED = '%[0-9A-Fa-f]{2}';
const UNRESERVED_AND_SUB_DELIMS = "A-Za-z0-9\\-._~!$&'()*+,;=";
const PCHAR = `(?:[${UNRESERVED_AND_SUB_DELIMS}:@]|${PCT_ENCODED})`;
const SEGMENT = `${PCHAR}*`;
const USERINFO = `(?:[${UNRESERVED_AND_SUB_DELIMS}:]|${PCT_ENCODED})*`;
// The IP-literal is only delimited here; the URL parser (below) refuses a malformed one.
const HOST = `(?:\\[[0-9A-Fa-f:.]+\\]|(?:[${UNRESERVED_AND_SUB_DELIMS}]|${PCT_ENCODED})*)`;
const AUTHORITY = `(?:${USERINFO}@)?${HOST}(?::[0-9]*)?`;
const HIER_PART = `(?://${AUTHORITY}(?:/${SEGMENT})*|/(?:${PCHAR}+(?:/${SEGMENT})*)?|${PCHAR}+(?:/${SEGMENT})*)`;
const QUERY_OR_FRAGMENT = `(?:${PCHAR}|[/?])*`;
const URI = new RegExp(
  `^[A-Za-z][A-Za-z0-9+\\-.]*:${HIER_PART}(?:\\?${QUERY_OR_FRAGMENT})?(?:#${QUERY_OR_FRAGMENT})?$`,
);

/**
 * An absolute URI as RFC 3986 §3 writes it (ASCII only, every other character
 * percent-encoded, no empty path after the scheme) that the WHATWG URL parser also takes.
 * The parser behind `isHttpUrl` and its siblings accepts more (spaces, `|`, `{}`,
 * non-ASCII), and the registry stores a URL as it was typed: the admin document declares
 * these fields `format: uri`, so what the server takes must be one.
 */
export function isUri(value: string): boolean {
  return URI.test(value) && URL.canParse(value);
}

/**
 * RFC 3986 syntax ({@link isUri}) on top of the field's own URL rule (`isHttpUrl`,
 * `isHttpsOrLoopbackUrl`, `isRedirectUri` of `@broker/domain`, decorated beside it):
 * checked only for values that rule accepts, so a bad value is one problem, named by the
 * rule that explains it best. A value rule (`400 validation failed`).
 */
export function IsUri(rule: (value: string) => boolean, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isUri',
      validator: {
        validate: (value) => typeof value !== 'string' || !rule(value) || isUri(value),
        defaultMessage: () =>
          '$property must be written as an RFC 3986 URI (ASCII only: spaces and other characters percent-encoded)',
      },
    },
    options,
  );
}
