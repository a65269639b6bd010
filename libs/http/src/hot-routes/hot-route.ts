import type { IncomingMessage } from 'node:http';

/** What a hot route answers. */
export interface HotRouteAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/**
 * A route on the request hot path (the token endpoint: every agent tool call pays for
 * it), answered straight from node:http by `installHotRoutes` with the same pipeline
 * steps as the Nest routes (trace start, shutdown refusal, capped raw body, error
 * envelope, access-log line) and nothing of Express or Nest (router, guards, pipes,
 * interceptors).
 */
export interface HotRoute {
  readonly method: string;
  /** Exact path; a request with a query string takes the ordinary route. */
  readonly path: string;
  readonly bodyLimitBytes: number;
  handle(request: IncomingMessage, body: Buffer): Promise<HotRouteAnswer>;
}

/** DI token: the hot routes an application registers (an array). */
export const HOT_ROUTES = Symbol('HOT_ROUTES');
