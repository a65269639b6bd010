/**
 * The child spans of a request (database statements, outbound calls), reached
 * without importing OpenTelemetry. The libs that send statements and calls (persistence,
 * outbound) build no client per tracing and get nothing injected; they call
 * `traceStatement` and `traceOutboundCall`, which do nothing but one comparison until an
 * enabled tracing installs its implementation, and then make a span only when the work
 * runs inside a request's recorded SERVER span (never a root span of their own).
 */

/** An answer with a status, as outbound calls return. */
export interface WithStatus {
  readonly status: number;
}

/** What an enabled tracing implementation provides (see `otel-tracing.ts`). */
export interface ChildSpans {
  statement<T>(sql: string, work: () => Promise<T>): Promise<T>;
  outboundCall<T extends WithStatus>(
    method: string,
    url: string,
    headers: Record<string, string>,
    send: (headers: Record<string, string>) => Promise<T>,
  ): Promise<T>;
}

let installed: ChildSpans | undefined;
let users = 0;

/**
 * Sends one database statement (`sql` is read for its operation keyword only: never its
 * values, never its text) as a `db <OPERATION>` CLIENT span of the current request.
 */
export function traceStatement<T>(sql: string, work: () => Promise<T>): Promise<T> {
  return installed === undefined ? work() : installed.statement(sql, work);
}

/**
 * Makes one outbound HTTP call as a CLIENT span of the current request, `send` receiving
 * `headers` with the W3C `traceparent` added (also for an unsampled request, so the peer
 * follows the decision).
 */
export function traceOutboundCall<T extends WithStatus>(
  method: string,
  url: string,
  headers: Record<string, string>,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  return installed === undefined ? send(headers) : installed.outboundCall(method, url, headers, send);
}

/**
 * Called by each enabled tracing at start; returns its release (at its shutdown). The
 * implementation is stateless (the request's context names its tracer), so several
 * enabled brokers in one process share it.
 */
export function installChildSpans(spans: ChildSpans): () => void {
  installed = spans;
  users += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    users -= 1;
    if (users === 0) installed = undefined;
  };
}
