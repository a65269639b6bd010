/**
 * OpenTelemetry tracing, off by default. This file is all that loads when it
 * is off: `NO_TRACING` does nothing, and the OpenTelemetry SDK is imported only by
 * `createTracing` when `telemetry.tracing.enabled` is true.
 */

/** The parent a request names in a valid `traceparent` (W3C Trace Context §3.2). */
export interface RemoteParent {
  readonly traceId: string;
  readonly spanId: string;
  /** Two hex digits; `01` = sampled. */
  readonly flags: string;
}

/** The SERVER span of one request: its ids are the request's trace id and `traceresponse`. */
export interface ServerSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** `01` when the span is recorded (sampled), `00` otherwise. */
  readonly flags: string;
  /** Runs `work` in the span's context: database statements and outbound calls made by it become its children. */
  run<T>(work: () => T): T;
  /**
   * Ends the span with the answer's status and the matched route template (null when none
   * matched: then the span is named after the method alone). Only the first call counts.
   */
  end(status: number, route: string | null): void;
}

/**
 * The process's tracing, chosen once at boot (`createTelemetry`): callers test `enabled`
 * once, when they build their pipeline, and never call `startServerSpan` when it is false,
 * so a broker without tracing does no per-request work for it.
 */
export abstract class Tracing {
  abstract readonly enabled: boolean;
  /**
   * Starts the SERVER span of a request: `method` as received, `route` the template when
   * already known (hot routes), `parent` the incoming `traceparent`, if valid.
   */
  abstract startServerSpan(method: string, route: string | null, parent: RemoteParent | undefined): ServerSpan;
  /** Flushes the spans not yet exported (clean shutdown). */
  abstract shutdown(): Promise<void>;
}

class NoTracing extends Tracing {
  readonly enabled = false;
  startServerSpan(): ServerSpan {
    throw new Error('tracing is disabled: the pipeline must not start spans (choose the untraced pipeline at boot)');
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Tracing switched off: no work at all. */
export const NO_TRACING: Tracing = new NoTracing();
