import type { BrokerRequest } from '@broker/auth';
import type { Random } from '@broker/domain';
import type { NextFunction, Response } from 'express';
import { formatTraceresponse, parseTraceparent } from './traceparent';

/**
 * First middleware of every request: adopts the trace id of a valid incoming
 * `traceparent` or mints one, makes it the request id, and (unless
 * `request_context.trace.response_enabled` is false) sets `traceresponse` before
 * anything can answer, so 2xx, 4xx, 5xx, 404 and preflight responses all carry it.
 */
export function traceMiddleware(random: Random, responseEnabled: boolean) {
  return (request: BrokerRequest, response: Response, next: NextFunction): void => {
    const header = request.headers.traceparent;
    const incoming = parseTraceparent(Array.isArray(header) ? header.join(',') : header);
    const traceId = incoming?.traceId ?? random.hex(16);
    request.traceId = traceId;
    if (responseEnabled) response.setHeader('traceresponse', formatTraceresponse(traceId, random.hex(8), incoming?.flags ?? '00'));
    next();
  };
}
