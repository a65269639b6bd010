import type { BrokerRequest } from '@broker/auth';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { pinoHttp, type HttpLogger, type Options } from 'pino-http';
import { accessLogFields, accessLogLevel, accessLogMessage } from './access-log';
import { queryCountOf } from './query-count.middleware';

/**
 * The Nest pipeline's access-log step, installed right after the trace start (as the hot
 * routes log every request they started, refused ones included): one line per request,
 * and the per-request logger (`req.log`) nestjs-pino binds for the handlers.
 */
export function requestLoggingMiddleware(logger: Logger): HttpLogger {
  return pinoHttp(requestLoggingOptions(logger));
}

/**
 * pino-http options for the one log line per request of the Nest pipeline, with the
 * fields, level and message the hot routes use (`accessLogFields`): trace id, method,
 * route (the matched pattern, never the query string), status, latency and `db_queries`.
 * Bodies and headers are never logged.
 */
function requestLoggingOptions(logger: Logger): Options {
  return {
    logger,
    genReqId: (request) => (request as BrokerRequest).traceId ?? 'unknown',
    customAttributeKeys: { reqId: 'trace_id', responseTime: 'latency_ms' },
    quietReqLogger: true,
    wrapSerializers: false,
    customLogLevel: (_request, response, error) => accessLogLevel(response.statusCode, Boolean(error)),
    customSuccessMessage: () => accessLogMessage('info'),
    customErrorMessage: () => accessLogMessage('error'),
    customSuccessObject: (request, response, value: { latency_ms?: number }) =>
      describe(request as BrokerRequest, response as Response, value),
    customErrorObject: (request, response, _error, value: { latency_ms?: number }) =>
      describe(request as BrokerRequest, response as Response, value),
    serializers: { req: () => undefined, res: () => undefined },
  };
}

function describe(request: BrokerRequest, response: Response, value: { latency_ms?: number }): Record<string, unknown> {
  return accessLogFields({
    method: request.method,
    route: (request.route as { path?: string } | undefined)?.path ?? null,
    path: request.path,
    status: response.statusCode,
    latencyMs: value.latency_ms,
    dbQueries: queryCountOf(request) ?? null,
  });
}
