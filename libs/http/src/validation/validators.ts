import { isHttpsOrLoopbackUrl, isHttpUrl, isRedirectUri } from '@broker/domain';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/** An absolute http(s) URL. */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isHttpUrl', validator: { validate: (value) => typeof value === 'string' && isHttpUrl(value), defaultMessage: () => '$property must be an absolute http(s) URL' } }, options);
}

/** An https(-or-loopback-http) URL the consent page may link or load (logos, documentation). */
export function IsHttpsOrLoopbackUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    { name: 'isHttpsOrLoopbackUrl', validator: { validate: (value) => typeof value === 'string' && isHttpsOrLoopbackUrl(value), defaultMessage: () => '$property must be an absolute https URL (http only on loopback)' } },
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
        defaultMessage: () => '$property must be absolute https URIs (http only on loopback) or private-use schemes such as com.example.app:/cb, without a fragment',
      },
    },
    options,
  );
}

/** An OAuth scope token (RFC 6749 §3.3: printable ASCII except space, `"` and `\`). */
export function IsScopeToken(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    { name: 'isScopeToken', validator: { validate: (value) => typeof value === 'string' && /^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/.test(value), defaultMessage: () => '$property must be scope tokens (1-255 printable characters, no spaces)' } },
    options,
  );
}
