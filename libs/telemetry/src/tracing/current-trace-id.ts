import { storage } from 'nestjs-pino/storage';
import type { Logger } from 'pino';

/**
 * Each request logger's `trace_id`, read once: pino's `bindings()` parses the logger's
 * serialized bindings on every call, and a request asks for its trace id more than once
 * (its audit record, its ledger event). Keyed by the logger object, which is the request's
 * own child (a logger given other bindings is another object).
 */
const traceIds = new WeakMap<Logger, string | null>();

/**
 * The trace id of the request being served (its `traceresponse`), or null outside
 * a request (background work). Read from the request's logger bindings (`trace_id`), which
 * both entrances bind: pino-http for the Nest routes, `requestLogger` for the hot routes.
 * The audit log's `request_id` is the same value, so an event and its audit line correlate.
 */
export function currentTraceId(): string | null {
  const logger = storage.getStore()?.logger;
  if (logger === undefined) return null;
  let traceId = traceIds.get(logger);
  if (traceId === undefined) {
    const bound = (logger.bindings() as { trace_id?: unknown }).trace_id;
    traceId = typeof bound === 'string' ? bound : null;
    traceIds.set(logger, traceId);
  }
  return traceId;
}

/** A request's logger: a child of `logger` with `trace_id` bound, whose trace id `currentTraceId` knows without reading it back. */
export function requestLogger(logger: Logger, traceId: string): Logger {
  const child = logger.child({ trace_id: traceId });
  traceIds.set(child, traceId);
  return child;
}
