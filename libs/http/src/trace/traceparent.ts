/** The parts of a W3C `traceparent` header the broker uses. */
export interface TraceContext {
  readonly traceId: string;
  /** The caller's span (the parent of the broker's SERVER span when tracing is enabled). */
  readonly parentId: string;
  readonly flags: string;
}

const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// W3C Trace Context §4.3: a later version may append fields after the flags.
const LATER_VERSION = /^(?!ff)([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Parses an incoming `traceparent` (W3C Trace Context §3.2). Returns undefined when
 * absent or invalid (then a new trace is started): wrong shape, upper-case hex,
 * all-zero ids, version ff, or several headers joined by a comma.
 */
export function parseTraceparent(header: string | undefined): TraceContext | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  const v0 = VERSION_00.exec(value);
  if (v0) return valid(v0[1] as string, v0[2] as string, v0[3] as string);
  const later = LATER_VERSION.exec(value);
  if (later && later[1] !== '00') return valid(later[2] as string, later[3] as string, later[4] as string);
  return undefined;
}

function valid(traceId: string, parentId: string, flags: string): TraceContext | undefined {
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, flags };
}

/** `traceresponse: 00-<trace id>-<span id>-<flags>` (W3C Trace Context Level 2). */
export function formatTraceresponse(traceId: string, spanId: string, flags: string): string {
  return `00-${traceId}-${spanId}-${flags}`;
}
