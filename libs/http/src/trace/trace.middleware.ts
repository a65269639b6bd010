import type { BrokerRequest } from '@broker/auth';
import type { NextFunction, Response } from 'express';
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
