import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { ApiError, type Random } from '@broker/domain';
import { runCountingQueries, type QueryCount } from '@broker/persistence';
import { storage, Store } from 'nestjs-pino/storage';
import type { Logger } from 'pino';
import { closeAfterRefusedBody } from '../body/close-after-refused-body';
import { readCappedBody } from '../body/read-capped-body';
import type { ErrorEnvelopeFilter } from '../errors/error-envelope.filter';
import { RequestBodyError } from '../errors/request-errors';
import type { Lifecycle } from '../lifecycle/lifecycle';
import { formatTraceresponse, parseTraceparent } from '../trace/traceparent';

/** What a hot route answers. */
export interface HotRouteAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/**
 * A route on the request hot path (the token endpoint: every agent tool call pays for
 * it), answered straight from node:http with only the cross-cutting work it needs: trace
 * id and `traceresponse`, the shutdown gate and in-flight tracking, a capped raw body,
 * the error envelope of its path, and the one log line. Nothing of Express or Nest
 * (router, guards, pipes, interceptors) runs for it.
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

export interface HotRouteRuntime {
  readonly random: Random;
  readonly lifecycle: Lifecycle;
  readonly traceResponse: boolean;
  readonly errors: ErrorEnvelopeFilter;
  readonly logger: Logger;
}

/** Puts `routes` in front of the server's request listener (Express); every other request goes on to it. */
export function installHotRoutes(server: Server, routes: readonly HotRoute[], runtime: HotRouteRuntime): void {
  if (routes.length === 0) return;
  const [fallback, ...others] = server.listeners('request') as RequestListener[];
  if (fallback === undefined || others.length > 0) throw new Error('expected exactly one request listener (the Express app)');
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const route = byKey.get(`${request.method ?? ''} ${request.url ?? ''}`);
    if (route === undefined) fallback(request, response);
    else
      serve(route, request, response, runtime).catch((error: unknown) => {
        // Only a failure of the error path itself lands here: answer 500 once, never hang.
        runtime.logger.error({ err: error, method: route.method, path: route.path }, 'hot route failed');
        if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end('{"error":"server_error","error_description":"internal error"}');
        else response.end();
      });
  });
}

async function serve(route: HotRoute, request: IncomingMessage, response: ServerResponse, runtime: HotRouteRuntime): Promise<void> {
  const started = process.hrtime.bigint();
  const header = request.headers.traceparent;
  const incoming = parseTraceparent(Array.isArray(header) ? header.join(',') : header);
  const traceId = incoming?.traceId ?? runtime.random.hex(16);
  if (runtime.traceResponse) response.setHeader('traceresponse', formatTraceresponse(traceId, runtime.random.hex(8), incoming?.flags ?? '00'));
  const context = { traceId, method: route.method, path: route.path };
  const queries: QueryCount = { queries: 0 };
  let answer: HotRouteAnswer;
  if (!runtime.lifecycle.track(request, response)) {
    response.setHeader('Connection', 'close');
    answer = failure(new ApiError('service unavailable', 'the server is shutting down'), context, runtime);
  } else {
    try {
      // The same per-request logger context as pino-http gives the Nest routes (audit `request_id`).
      const body = await readCappedBody(request, route.bodyLimitBytes);
      answer = await storage.run(new Store(runtime.logger.child({ trace_id: traceId })), () => runCountingQueries(queries, () => route.handle(request, body)));
    } catch (error) {
      // A refused body is left unread: answer first, then drain and close the connection.
      if (error instanceof RequestBodyError) closeAfterRefusedBody(request, response);
      answer = failure(error, context, runtime);
    }
  }
  response.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) }).end(answer.body);
  const level = answer.status >= 500 ? 'error' : 'info';
  runtime.logger[level]({ trace_id: traceId, method: route.method, route: route.path, path: route.path, status: answer.status, latency_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e6), db_queries: queries.queries }, level === 'error' ? 'request failed' : 'request completed');
}

function failure(error: unknown, context: { traceId: string; method: string; path: string }, runtime: HotRouteRuntime): HotRouteAnswer {
  const { status, body, headers } = runtime.errors.present(error, context);
  runtime.errors.logServerError(status, error, context);
  return { status, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
}
