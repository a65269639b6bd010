import type { ServerKind } from '@broker/config';
import type { ValidationCode } from '../validation/validation-vocabulary';

/** What an envelope needs to know about the failed request. */
export interface ErrorContext {
  readonly server: ServerKind;
  readonly traceId: string;
  readonly method: string;
  /** The path without its query string (which may carry tokens). */
  readonly path: string;
  /** The code the route answers validation failures with (`@ValidationVocabulary`), when it names one. */
  readonly validationCode?: ValidationCode;
}
