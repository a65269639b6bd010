import cors from 'cors';

/**
 * CORS for the end-user server's `/api/*` routes (SPEC.md "Cross-cutting behaviour"):
 * only the configured origins (default: the consent UI's), credentials allowed, and
 * the origin echoed (never `*` with credentials).
 */
export function corsMiddleware(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins);
  return cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Content-Type', 'Authorization', 'X-Client-Assertion', 'traceparent', 'If-None-Match', 'X-Long-Poll-Timeout'],
    exposedHeaders: ['traceresponse', 'ETag', 'Retry-After'],
    maxAge: 600,
  });
}
