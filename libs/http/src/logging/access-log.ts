/** The level of a request's log line. */
export type AccessLogLevel = 'info' | 'error';

/** What the one log line of a request says about it (bodies and headers never). */
export interface AccessLogEntry {
  readonly method: string;
  /** The matched route pattern, null when nothing matched; never the query string. */
  readonly route: string | null;
  /** The path without its query string (which may carry tokens). */
  readonly path: string;
  readonly status: number;
  readonly latencyMs: number | undefined;
  /** Database statements the request sent; null when it was answered before reaching the counter. */
  readonly dbQueries: number | null;
}

/**
 * The fields of the one log line per request, written the same way by both entrances
 * (pino-http's success and error objects for the Nest pipeline, and the hot routes); the
 * trace id is the logger's binding (`trace_id`) on both.
 */
export function accessLogFields(entry: AccessLogEntry): Record<string, unknown> {
  return {
    method: entry.method,
    route: entry.route,
    path: entry.path,
    status: entry.status,
    latency_ms: entry.latencyMs,
    db_queries: entry.dbQueries,
  };
}

/** A server error, or a response that failed while being written, is an `error` line; everything else `info`. */
export function accessLogLevel(status: number, failed = false): AccessLogLevel {
  return failed || status >= 500 ? 'error' : 'info';
}

/** The message of the line at `level`. */
export function accessLogMessage(level: AccessLogLevel): string {
  return level === 'error' ? 'request failed' : 'request completed';
}
