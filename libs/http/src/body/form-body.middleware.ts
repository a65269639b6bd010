import type { NextFunction, Request, Response } from 'express';
import { RequestBodyError } from '../errors/request-errors';
import { closeAfterRefusedBody } from './close-after-refused-body';
import { readCappedBody } from './read-capped-body';

/** The token endpoint's body, refused (400 invalid_request) before parsing. */
export const TOKEN_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * The backchannel authentication endpoint's body (OpenID CIBA Core 1.0 §7.1): larger than the token
 * endpoint's, so that an oversized `authorization_details` (limited to 64 KiB itself) is answered
 * with RFC 9396 §5's `invalid_authorization_details`, not as a body over the limit.
 */
export const BACKCHANNEL_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/**
 * Reads the token endpoint's body as raw bytes (the endpoint parses the form itself, to
 * refuse repeated parameters), with the hot route's reader: a body over `limit` (256 KiB) or
 * content-encoded is refused before any parsing, answered first and its connection then
 * drained and closed.
 */
export function tokenBodyMiddleware(limit = TOKEN_BODY_LIMIT_BYTES) {
  return (request: Request, response: Response, next: NextFunction): void => {
    readCappedBody(request, limit).then(
      (body) => {
        request.body = body;
        next();
      },
      (error: unknown) => {
        if (error instanceof RequestBodyError) closeAfterRefusedBody(request, response);
        next(error);
      },
    );
  };
}
