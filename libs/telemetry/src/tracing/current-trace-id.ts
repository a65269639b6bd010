import { storage } from 'nestjs-pino/storage';

/**
 * Issue 17: the trace id of the request being served (its `traceresponse`), or null outside
 * a request (background work). Read from the request's logger bindings (`trace_id`), which
 * both entrances bind: pino-http for the Nest routes, `installHotRoutes` for the hot routes.
 * The audit log's `request_id` is the same value, so an event and its audit line correlate.
 */
export function currentTraceId(): string | null {
  const bindings = storage.getStore()?.logger.bindings() as { trace_id?: unknown } | undefined;
  return typeof bindings?.trace_id === 'string' ? bindings.trace_id : null;
}
