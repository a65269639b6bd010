import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Random } from '@broker/domain';
import { formatTraceresponse, parseTraceparent } from './traceparent';

/** Starts the trace of one request and returns its trace id (see `createTraceStart`). */
export type TraceStart = (request: IncomingMessage, response: ServerResponse) => string;

/**
 * The first step of every request, on both entrances (the Nest pipeline's middleware and
 * the hot routes): adopts the trace id of a valid incoming `traceparent` (W3C Trace
 * Context §3.2) or mints one, and, unless `request_context.trace.response_enabled` is
 * false, sets `traceresponse` with a new span id before anything can answer, so every
 * response carries it. The options are bound once, at boot.
 */
export function createTraceStart(random: Random, responseEnabled: boolean): TraceStart {
  return (request, response) => {
    const header = request.headers.traceparent;
    // Several traceparent headers are joined, which parseTraceparent refuses: a new trace is started.
    const incoming = parseTraceparent(Array.isArray(header) ? header.join(',') : header);
    const traceId = incoming?.traceId ?? random.hex(16);
    if (responseEnabled)
      response.setHeader('traceresponse', formatTraceresponse(traceId, random.hex(8), incoming?.flags ?? '00'));
    return traceId;
  };
}
