/**
 * Error codes of the end-user and admin APIs (`{error, message}` envelope).
 * docs/http-api.md, "Behaviour every route shares". The strings are the
 * wire values; the API exception filter maps each to its HTTP status exhaustively.
 */
export type ApiErrorCode =
  | 'bad request'
  | 'invalid request'
  | 'invalid request body'
  | 'validation failed'
  | 'session_expired'
  | 'session_used'
  | 'invalid_permission_set'
  | 'invalid scopes'
  | 'invalid_redirect_uri'
  | 'refresh_unavailable'
  | 'refresh_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'grant_required'
  | 'not_found'
  | 'agent not found'
  | 'service not found'
  | 'permission set not found'
  | 'resource not found'
  | 'signing key not found'
  | 'client credentials not found'
  | 'grant not found'
  | 'conflict'
  | 'last_key'
  | 'current_key'
  | 'gone'
  | 'invalid_pattern'
  | 'not_consumable'
  | 'not_revocable'
  | 'rate_limited'
  | 'unsupported media type'
  | 'payload too large'
  | 'service unavailable'
  | 'internal error';

/** One field-level problem reported with a 400. */
export interface FieldIssue {
  readonly field: string;
  readonly problem: string;
  /** The rule that failed (class-validator constraint name), when known. */
  readonly constraint?: string;
}

/**
 * A failure of an end-user or admin operation, in the API's wire vocabulary. The apps and
 * the HTTP-facing libraries throw it (never an `HttpException`); other libraries throw their
 * own coded errors, which the app's vocabulary turns into one (docs/architecture.md,
 * "Errors"). The API exception filter chooses status and envelope.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details: readonly FieldIssue[] = [],
    /** For `rate_limited`: seconds until a retry can succeed (sent as `Retry-After`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
