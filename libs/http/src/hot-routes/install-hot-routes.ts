import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { requestLogger, type HttpServerMetrics } from '@broker/telemetry';
import { storage, Store } from 'nestjs-pino/storage';
import type { Logger } from 'pino';
import { closeAfterRefusedBody } from '../body/close-after-refused-body';
import { readCappedBody } from '../body/read-capped-body';
import type { ErrorEnvelopeFilter } from '../errors/error-envelope.filter';
import type { ErrorContext } from '../errors/error-context';
import { RequestBodyError } from '../errors/request-errors';
import type { Lifecycle } from '../lifecycle/lifecycle';
import { refuseDuringShutdown } from '../lifecycle/shutdown-gate';
import { accessLogFields, accessLogLevel, accessLogMessage } from '../logging/access-log';
import type { CountQueries, QueryCount } from '../logging/query-count.middleware';
import type { SpanStart } from '../trace/start-server-span';
import type { TraceStart } from '../trace/start-trace';
import type { HotRoute, HotRouteAnswer } from './hot-route';

/** The pipeline steps the hot routes share with the Nest routes, built once by `configureApp`. */
export interface HotRouteRuntime {
  readonly startTrace: TraceStart;
  /** Set when tracing is enabled, and then used instead of `startTrace`. */
  readonly startSpan?: SpanStart;
  readonly lifecycle: Lifecycle;
  readonly errors: ErrorEnvelopeFilter;
  readonly logger: Logger;
  /** The same statement counter as the Nest routes' (`db_queries` on both entrances). */
  readonly countQueries: CountQueries;
  /** The request duration histogram, observed with the route's own path (a fixed, exact path). */
  readonly requestMetrics?: HttpServerMetrics;
}

/** Puts `routes` in front of the server's request listener (Express); every other request goes on to it. */
export function installHotRoutes(server: Server, routes: readonly HotRoute[], runtime: HotRouteRuntime): void {
  if (routes.length === 0) return;
  const [fallback, ...others] = server.listeners('request') as RequestListener[];
  if (fallback === undefined || others.length > 0)
    throw new Error('expected exactly one request listener (the Express app)');
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const route = byKey.get(`${request.method ?? ''} ${request.url ?? ''}`);
    if (route === undefined) fallback(request, response);
    else
      serve(route, request, response, runtime).catch((error: unknown) => {
        // Only a failure of the error envelope or the logger lands here: never leave the client hanging.
        runtime.logger.error({ err: error, method: route.method, path: route.path }, 'hot route failed');
        if (!response.writableEnded) response.destroy();
      });
  });
}

/** One request through the shared steps, in the Nest pipeline's order: trace, shutdown gate, body, handler, answer, log line. */
async function serve(
  route: HotRoute,
  request: IncomingMessage,
  response: ServerResponse,
  runtime: HotRouteRuntime,
): Promise<void> {
  const started = process.hrtime.bigint();
  const span = runtime.startSpan?.(request, response, route.path);
  const traceId = span === undefined ? runtime.startTrace(request, response) : span.traceId;
  const context: Omit<ErrorContext, 'server'> = { traceId, method: route.method, path: route.path };
  // The same per-request logger as pino-http gives the Nest routes: trace id bound (audit `request_id`, the log line).
  const logger = requestLogger(runtime.logger, traceId);
  const queries: QueryCount = { queries: 0 };
  // The handler's statements and outbound calls are children of the request's span.
  let answer = await (span === undefined
    ? answerRequest(route, request, response, runtime, context, logger, queries)
    : span.run(() => answerRequest(route, request, response, runtime, context, logger, queries)));
  try {
    write(response, answer);
  } catch (error) {
    // Node refuses a header value (a relayed answer) before anything is sent: the envelope's 500 instead.
    answer = runtime.errors.answer(error, context);
    if (response.headersSent) response.end();
    else write(response, answer);
  }
  const level = accessLogLevel(answer.status);
  const latencyMs = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  logger[level](
    accessLogFields({
      method: route.method,
      route: route.path,
      path: route.path,
      status: answer.status,
      latencyMs,
      dbQueries: queries.queries,
    }),
    accessLogMessage(level),
  );
  runtime.requestMetrics?.observe(
    route.method,
    route.path,
    answer.status,
    Number(process.hrtime.bigint() - started) / 1e9,
  );
  span?.end(answer.status, route.path);
}

async function answerRequest(
  route: HotRoute,
  request: IncomingMessage,
  response: ServerResponse,
  runtime: HotRouteRuntime,
  context: Omit<ErrorContext, 'server'>,
  logger: Logger,
  queries: QueryCount,
): Promise<HotRouteAnswer> {
  const refusal = refuseDuringShutdown(runtime.lifecycle, request, response, route.path);
  if (refusal !== undefined) return runtime.errors.answer(refusal, context);
  try {
    const body = await readCappedBody(request, route.bodyLimitBytes);
    // Counted until the handler settles, even if the client has gone: shutdown waits for its writes (a rotated refresh token).
    return await runtime.lifecycle.completes(() =>
      storage.run(new Store(logger), () => runtime.countQueries(queries, () => route.handle(request, body))),
    );
  } catch (error) {
    // A refused body is left unread: answer first, then drain and close the connection.
    if (error instanceof RequestBodyError) closeAfterRefusedBody(request, response);
    return runtime.errors.answer(error, context);
  }
}

function write(response: ServerResponse, answer: HotRouteAnswer): void {
  response
    .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) })
    .end(answer.body);
}
