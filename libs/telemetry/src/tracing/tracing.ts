/**
 * OpenTelemetry tracing (issue 16), off by default. This file is all that loads when it
 * is off: `NO_TRACING` does nothing, and the OpenTelemetry SDK is imported only by
 * `createTracing` when `telemetry.tracing.enabled` is true.
 */
export abstract class Tracing {
  abstract readonly enabled: boolean;
  /** Flushes the spans not yet exported (clean shutdown). */
  abstract shutdown(): Promise<void>;
}

class NoTracing extends Tracing {
  readonly enabled = false;
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Tracing switched off: no work at all. */
export const NO_TRACING: Tracing = new NoTracing();
