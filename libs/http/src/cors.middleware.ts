import cors from 'cors';
import type { NextFunction, Request, Response } from 'express';

/**
 * CORS for the end-user server's `/api/*` routes (docs/http-api.md):
 * only the configured origins (default: the consent UI's), credentials allowed, and
 * the origin echoed (never `*` with credentials). Every preflight on `/api/*` is answered
 * 204, with the grant headers only for an allowed origin: a browser then reports a clear
 * CORS refusal to a foreign page, rather than the 404 of a route that has no OPTIONS.
 */
export function corsMiddleware(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins);
  const grant = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [
      'Content-Type',
      'Authorization',
      'X-Client-Assertion',
      'traceparent',
      'If-None-Match',
      'X-Long-Poll-Timeout',
    ],
    exposedHeaders: ['traceresponse', 'ETag', 'Retry-After'],
    maxAge: 600,
  });
  return (request: Request, response: Response, next: NextFunction): void => {
    grant(request, response, (error?: unknown) => {
      if (error !== undefined && error !== null) return next(error);
      // Fetch standard §3.2.2: a preflight is an OPTIONS request with Access-Control-Request-Method.
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
        response.vary('Origin').status(204).setHeader('Content-Length', '0');
        response.end();
        return;
      }
      next();
    });
  };
}
