import { UNMATCHED_ROUTE, type HttpServerMetrics } from '@broker/telemetry';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

const STARTED = Symbol('metricsStartedMs');

interface TimedResponse extends Response {
  [STARTED]?: number;
}

/** The route template Express matched (`/api/agents/:agentId`), never the raw path; `unmatched` when none did. */
function routeTemplate(request: Request): string {
  const path = (request.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? request.baseUrl + path : UNMATCHED_ROUTE;
}

/**
 * `broker_http_request_duration_seconds` for the Nest pipeline's requests (the hot
 * routes observe their own in `installHotRoutes`). Installed only when metrics are enabled;
 * per request it stores a start time on the response and adds one shared `finish` listener
 * (no closure per request).
 */
export function httpMetricsMiddleware(requests: HttpServerMetrics): RequestHandler {
  function onFinish(this: TimedResponse): void {
    const started = this[STARTED];
    if (started === undefined) return;
    requests.observe(this.req.method, routeTemplate(this.req), this.statusCode, (performance.now() - started) / 1000);
  }
  return (_request: Request, response: TimedResponse, next: NextFunction) => {
    response[STARTED] = performance.now();
    response.once('finish', onFinish);
    next();
  };
}
