import type { ServerKind } from '@broker/config';

/** What an envelope needs to know about the failed request. */
export interface ErrorContext {
  readonly server: ServerKind;
  readonly traceId: string;
  readonly method: string;
  /** The path without its query string (which may carry tokens). */
  readonly path: string;
}
