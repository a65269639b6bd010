import express, { type NextFunction, type Request, type Response } from 'express';
import { RequestBodyError } from '../errors/request-errors';
import { checkedJsonBody, RefusedJsonBody } from './refused-json-body';

/** Bodies of the JSON APIs; the token endpoint has its own 256 KiB form limit. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];

function hasBody(request: Request): boolean {
  return (
    request.headers['transfer-encoding'] !== undefined ||
    (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0')
  );
}

/** Maps body-parser's errors to the broker's; never forwards its text for unknown kinds. */
function toBodyError(error: unknown): Error {
  const type = (error as { type?: unknown }).type;
  switch (type) {
    case 'entity.parse.failed':
      return new RequestBodyError('malformed', 'the request body is not valid JSON');
    case 'entity.too.large':
      return new RequestBodyError('too_large', `the request body is larger than ${JSON_BODY_LIMIT_BYTES} bytes`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new RequestBodyError(
        'unsupported_media_type',
        'the request body must be UTF-8 JSON without content encoding',
      );
    case 'request.size.invalid':
    case 'request.aborted':
      return new RequestBodyError('malformed', 'the request body was incomplete');
    default:
      return error instanceof Error ? error : new Error('body parsing failed');
  }
}

/**
 * Parses JSON request bodies (strict: objects and arrays only, UTF-8). A body with any
 * other content type is refused with 415, one too large with 413, before a handler sees it.
 * A body that is read but breaks a rule (malformed, nested deeper than 64 levels, a number
 * beyond the double range) becomes a `RefusedJsonBody`: the handler that reads it refuses
 * it with 400, after authentication, so an unauthenticated caller learns nothing about
 * how bodies are validated; one that takes no body refuses any body.
 */
export function jsonBodyMiddleware(skip: (request: Request) => boolean) {
  const parse = express.json({ limit: JSON_BODY_LIMIT_BYTES, strict: true, type: JSON_TYPES });
  return (request: Request, response: Response, next: NextFunction): void => {
    if (skip(request) || !hasBody(request)) {
      next();
      return;
    }
    if (!request.is(JSON_TYPES)) {
      next(new RequestBodyError('unsupported_media_type', 'the request body must be application/json'));
      return;
    }
    parse(request, response, (error?: unknown) => {
      if (error === undefined) request.body = checkedJsonBody(request.body);
      else {
        const refusal = toBodyError(error);
        // Not JSON: refused where the body is read. Too large, encoded, cut short: refused now.
        if (!(refusal instanceof RequestBodyError) || (error as { type?: unknown }).type !== 'entity.parse.failed') {
          next(refusal);
          return;
        }
        request.body = new RefusedJsonBody(refusal);
      }
      next();
    });
  };
}
