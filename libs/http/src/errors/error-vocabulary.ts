import { ApiError, type ApiErrorCode, type FieldIssue } from '@broker/domain';

/** A library's coded refusal (`RegistryError`, `ApprovalError`, `TokenVaultError`, ...): it names the rule, never the wire. */
export interface CodedError<C extends string = string> extends Error {
  readonly code: C;
  /** The fields that broke the rule, sent as `details` when present. */
  readonly details?: readonly FieldIssue[];
  /** Seconds until a retry can succeed, sent as `Retry-After` (RFC 9110 §10.2.3) when present. */
  readonly retryAfterSeconds?: number;
}

/** An app's answer to one code: the wire code (the library's message passed through), or the wire code and its own message. */
export type WireAnswer<E> =
  ApiErrorCode | { readonly error: ApiErrorCode; readonly message: string | ((error: E) => string) };

/** One library error class and the app's answer to each of its codes (the compiler checks that every code has one). */
export interface VocabularyEntry<E extends CodedError> {
  readonly errors: abstract new (...args: never[]) => E;
  readonly answers: { readonly [C in E['code']]: WireAnswer<E> };
}

/** Types one entry of a vocabulary: `answers` must name every code of `errors`. */
export function answersTo<E extends CodedError>(
  errors: abstract new (...args: never[]) => E,
  answers: { readonly [C in E['code']]: WireAnswer<E> },
): VocabularyEntry<CodedError> {
  return { errors, answers } as unknown as VocabularyEntry<CodedError>;
}

/**
 * One app's vocabulary: the table from each library's error codes to the app's wire answer
 * (`{error, message}` with the status of the wire code). The app's exception filter consults
 * it for every failure of an API route (never the OAuth2 endpoints, whose answers are RFC 6749's
 * and chosen where the grant runs); services throw the library's error as it is and map nothing.
 * Consulted only for a failure, so a request that succeeds pays nothing.
 */
export class ErrorVocabulary {
  static readonly none = new ErrorVocabulary([]);

  constructor(private readonly entries: readonly VocabularyEntry<CodedError>[]) {}

  /** The `ApiError` for a refusal this vocabulary names; any other value as it is. */
  translate(error: unknown): unknown {
    for (const { errors, answers } of this.entries) {
      if (!(error instanceof errors)) continue;
      const answer = answers[error.code];
      if (answer === undefined) return error;
      const [code, message] =
        typeof answer === 'string'
          ? [answer, error.message]
          : [answer.error, typeof answer.message === 'string' ? answer.message : answer.message(error)];
      return new ApiError(code, message, error.details ?? [], error.retryAfterSeconds);
    }
    return error;
  }
}

/** The provider an app gives its vocabulary under (read once when the app is configured). */
export const ERROR_VOCABULARY = Symbol('ERROR_VOCABULARY');
