import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerSpan, Tracing } from '@broker/telemetry';
import { formatTraceresponse, parseTraceparent } from './traceparent';

/** Starts the SERVER span of one request (tracing enabled); `route` is the template when already known. */
export type SpanStart = (request: IncomingMessage, response: ServerResponse, route: string | null) => ServerSpan;

/**
 * The trace start of both entrances when tracing is enabled (`createTraceStart`
 * when it is not: chosen once, at boot). The SERVER span continues a valid incoming
 * `traceparent` (the same parsing as without tracing), and its ids are the request's: the
 * trace id the log line and the audit records carry, and `traceresponse`'s trace and span
 * ids, so a response, its log line and its spans name one trace.
 */
export function createSpanStart(tracing: Tracing, responseEnabled: boolean): SpanStart {
  return (request, response, route) => {
    const header = request.headers.traceparent;
    const incoming = parseTraceparent(Array.isArray(header) ? header.join(',') : header);
    const parent =
      incoming === undefined
        ? undefined
        : { traceId: incoming.traceId, spanId: incoming.parentId, flags: incoming.flags };
    const span = tracing.startServerSpan(request.method ?? 'GET', route, parent);
    if (responseEnabled)
      response.setHeader('traceresponse', formatTraceresponse(span.traceId, span.spanId, span.flags));
    return span;
  };
}
