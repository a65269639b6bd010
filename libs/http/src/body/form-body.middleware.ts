import type { NextFunction, Request, Response } from 'express';
import { RequestBodyError } from '../errors/request-errors';
import { closeAfterRefusedBody } from './close-after-refused-body';
import { readCappedBody } from './read-capped-body';

/** The token endpoint's body, refused (400 invalid_request) before parsing. */
export const TOKEN_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * Reads the token endpoint's body as raw bytes (the endpoint parses the form itself, to
 * refuse repeated parameters), with the hot route's reader: a body over 256 KiB or
 * content-encoded is refused before any parsing, answered first and its connection then
 * drained and closed.
 */
export function tokenBodyMiddleware() {
  return (request: Request, response: Response, next: NextFunction): void => {
    readCappedBody(request, TOKEN_BODY_LIMIT_BYTES).then(
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
