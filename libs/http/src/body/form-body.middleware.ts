import express, { type NextFunction, type Request, type Response } from 'express';
import { RequestBodyError } from '../errors/request-errors';

/** SPEC.md "Limits": the token endpoint's body, refused (400 invalid_request) before parsing. */
export const TOKEN_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * Reads the token endpoint's body as raw bytes (the endpoint parses the form itself, to
 * refuse repeated parameters); a body over 256 KiB is refused before any parsing.
 */
export function tokenBodyMiddleware() {
  const read = express.raw({ type: () => true, limit: TOKEN_BODY_LIMIT_BYTES });
  return (request: Request, response: Response, next: NextFunction): void => {
    read(request, response, (error?: unknown) => {
      if (error === undefined) return next();
      const type = (error as { type?: unknown }).type;
      next(new RequestBodyError(type === 'entity.too.large' ? 'too_large' : 'malformed', type === 'entity.too.large' ? 'the request body is larger than 256 KiB' : 'the request body could not be read'));
    });
  };
}
