import {
  isHttpsOrLoopbackUrl,
  isHttpUrl,
  isRedirectUri,
  isResourceIndicatorEntry,
  parseRfc3339DateTime,
  textProblem,
} from '@broker/domain';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * At most this many entries in any list of an admin body (URIs, scopes, assignments). A 1 MiB
 * body holds 30,000 URIs: their rows overflowed PostgreSQL's 65,535 bind parameters (a 500).
 */
export const MAX_LIST_ENTRIES = 1000;

/** An absolute http(s) URL. */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate: (value) => typeof value === 'string' && isHttpUrl(value),
        defaultMessage: () => '$property must be an absolute http(s) URL',
      },
    },
    options,
  );
}

/** An https(-or-loopback-http) URL the consent page may link or load (logos, documentation). */
export function IsHttpsOrLoopbackUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHttpsOrLoopbackUrl',
      validator: {
        validate: (value) => typeof value === 'string' && isHttpsOrLoopbackUrl(value),
        defaultMessage: () => '$property must be an absolute https URL (http only on loopback)',
      },
    },
    options,
  );
}

/** A redirect URI (`isRedirectUri`: https, loopback http or an RFC 8252 private-use scheme; no fragment). */
export function IsRedirectUri(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRedirectUri',
      validator: {
        validate: (value) => typeof value === 'string' && isRedirectUri(value),
        defaultMessage: () =>
          '$property must be absolute https URIs (http only on loopback) or private-use schemes such as com.example.app:/cb, without a fragment',
      },
    },
    options,
  );
}

/** An RFC 8707 resource-indicator entry (`isResourceIndicatorEntry`): an absolute URI without fragment, or an http(s) prefix ending in `/`. */
export function IsResourceIndicatorEntry(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isResourceIndicatorEntry',
      validator: {
        validate: (value) => typeof value === 'string' && isResourceIndicatorEntry(value),
        defaultMessage: () =>
          '$property must be absolute URIs without fragment or user info; a prefix ends in / and starts with an http(s) origin, e.g. https://mcp.example.com/',
      },
    },
    options,
  );
}

/** An OAuth scope token (RFC 6749 §3.3: printable ASCII except space, `"` and `\`). */
export function IsScopeToken(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isScopeToken',
      validator: {
        validate: (value) => typeof value === 'string' && /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/.test(value),
        defaultMessage: () => '$property must be scope tokens (1-255 printable characters, no spaces)',
      },
    },
    options,
  );
}

/**
 * Text without control characters or lone surrogates (`textProblem`): names, client ids,
 * URLs and secrets; `{ lines: true }` also allows the tab and line breaks of a description.
 * Non-strings pass (the type is another decorator's rule). The constraint is a value rule:
 * admin `400 validation failed` naming the field.
 */
export function IsPlainText(text: { readonly lines?: boolean } = {}, options?: ValidationOptions): PropertyDecorator {
  const allowed = text.lines === true ? ' (tab and line breaks are allowed)' : '';
  return ValidateBy(
    {
      name: 'isPlainText',
      validator: {
        validate: (value) => typeof value !== 'string' || textProblem(value, text) === undefined,
        defaultMessage: () => `$property must not contain control characters or unpaired surrogates${allowed}`,
      },
    },
    options,
  );
}

/** An RFC 3339 date-time with a time zone on a real calendar date (`2026-02-30` is refused, not read as 2 March). */
export function IsDateTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isRfc3339DateTime',
    validator: {
      validate: (value) => typeof value === 'string' && parseRfc3339DateTime(value) !== undefined,
      defaultMessage: () => '$property must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z',
    },
  });
}
