import type { ApiErrorCode, OAuthErrorCode } from '@broker/domain';
import { ApiExtension } from '@nestjs/swagger';

/** The operation extension that carries an operation's own error codes until the document is completed. */
export const ERROR_CODES_EXTENSION = 'x-broker-error-codes';

/**
 * The error answers an operation gives beyond those every operation of its shape gives
 * (see `completeOpenApiDocument`): each code is documented under its status (the
 * status table of `statuses.ts`) in the envelope of the route's family, so the
 * document lists exactly the codes a client must handle.
 */
export function ApiErrors(...codes: readonly ApiErrorCode[]): MethodDecorator & ClassDecorator {
  return ApiExtension(ERROR_CODES_EXTENSION, codes);
}

/** `ApiErrors` for the OAuth2 endpoints (`{error, error_description[, error_uri]}`). */
export function OAuthErrors(...codes: readonly OAuthErrorCode[]): MethodDecorator & ClassDecorator {
  return ApiExtension(ERROR_CODES_EXTENSION, codes);
}
