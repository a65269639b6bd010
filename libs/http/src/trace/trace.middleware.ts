import type { BrokerRequest } from '@broker/auth';
import type { ServerSpan } from '@broker/telemetry';
import type { NextFunction, Request, Response } from 'express';
import type { SpanStart } from './start-server-span';
import type { TraceStart } from './start-trace';

/**
 * First middleware of every request of the Nest pipeline: starts the trace (the same
 * `TraceStart` the hot routes call) and makes its id the request id, so 2xx, 4xx, 5xx,
 * 404 and preflight responses all carry `traceresponse`.
 */
export function traceMiddleware(startTrace: TraceStart) {
  return (request: BrokerRequest, response: Response, next: NextFunction): void => {
    request.traceId = startTrace(request, response);
    next();
  };
}

const spans = new WeakMap<Request, ServerSpan>();

/** The matched route pattern (`/api/agents/:agentId`), null when nothing matched. */
function routeTemplate(request: Request): string | null {
  const path = (request.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : null;
}

/**
 * Tracing enabled: `traceMiddleware`'s place, with the request's SERVER span. Its
 * trace id is the request id; it ends when the response closes, named after the matched
 * route template (never the raw path).
 */
export function tracedMiddleware(startSpan: SpanStart) {
  return (request: BrokerRequest, response: Response, next: NextFunction): void => {
    const span = startSpan(request, response, null);
    request.traceId = span.traceId;
    spans.set(request, span);
    response.once('close', () => span.end(response.statusCode, routeTemplate(request)));
    span.run(next);
  };
}

/**
 * Tracing enabled: re-enters the request's span after body parsing, whose later
 * packets arrive in the socket's asynchronous context, not the request's (as the statement
 * counter, installed at the same place), so the handlers' statements and calls are its children.
 */
export function spanContextMiddleware() {
  return (request: Request, _response: Response, next: NextFunction): void => {
    const span = spans.get(request);
    if (span === undefined) next();
    else span.run(next);
  };
}
