import type { BrokerRequest } from '@broker/auth';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { Options } from 'pino-http';
import { queryCountOf } from './query-count.middleware';

/**
 * pino-http options for the one log line per request: trace id, method, route (the
 * matched pattern, never the query string), status, latency and `db_queries` (database
 * statements the request sent, transaction control included; null when it was answered
 * before reaching the counter). Bodies and headers are never logged.
 */
export function requestLoggingOptions(logger: Logger): Options {
  return {
    logger,
    genReqId: (request) => (request as BrokerRequest).traceId ?? 'unknown',
    customAttributeKeys: { reqId: 'trace_id', responseTime: 'latency_ms' },
    quietReqLogger: true,
    wrapSerializers: false,
    customLogLevel: (_request, response, error) => (error || response.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    customSuccessObject: (request, response, value: { latency_ms?: number }) => describe(request as BrokerRequest, response as Response, value),
    customErrorObject: (request, response, _error, value: { latency_ms?: number }) => describe(request as BrokerRequest, response as Response, value),
    serializers: { req: () => undefined, res: () => undefined },
  };
}

function describe(request: BrokerRequest, response: Response, value: { latency_ms?: number }): Record<string, unknown> {
  const route = (request.route as { path?: string } | undefined)?.path;
  return {
    method: request.method,
    route: route ?? null,
    path: request.path,
    status: response.statusCode,
    latency_ms: value.latency_ms,
    db_queries: queryCountOf(request) ?? null,
  };
}
