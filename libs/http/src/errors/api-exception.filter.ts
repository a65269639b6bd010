import { ApiError, assertNever, type ApiErrorCode, type FieldIssue, type OAuthErrorCode } from '@broker/domain';
import type { RequestPart } from './request-errors';
import { internalErrorMessage, type ErrorResponse, type Failure } from './failure';
import type { ErrorContext } from './error-context';
import { apiStatus, oauthStatus } from './statuses';

/** The code for a status raised by the framework itself (unknown route, ...). */
function codeForStatus(status: number, context: ErrorContext): ApiErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 413) return 'payload too large';
  if (status === 415) return 'unsupported media type';
  if (status === 503) return 'service unavailable';
  if (status >= 500) return 'internal error';
  return context.server === 'admin' ? 'invalid request' : 'bad request';
}

/** Constraints that say the body has the wrong shape, not a wrong value. */
const SHAPE_CONSTRAINTS = new Set([
  'whitelistValidation',
  'unknownValue',
  'nestedValidation',
  'isDefined',
  'isString',
  'isArray',
  'isObject',
  'isBoolean',
  'isInt',
  'isNumber',
  'isNotEmptyObject',
]);

/**
 * The server's code of a DTO validation failure (a route may name its own with
 * `@ValidationVocabulary`). End-user: `invalid request` for a body,
 * `bad request` for a path or query. Admin: `invalid request
 * body` when the body has the wrong shape (unknown or missing fields, wrong types),
 * `validation failed` when its values break a rule, `invalid request` for a path or query.
 */
function validationCode(part: RequestPart, issues: readonly FieldIssue[], context: ErrorContext): ApiErrorCode {
  if (context.server === 'enduser') return part === 'body' ? 'invalid request' : 'bad request';
  if (part !== 'body') return 'invalid request';
  return issues.some((issue) => issue.constraint === undefined || SHAPE_CONSTRAINTS.has(issue.constraint))
    ? 'invalid request body'
    : 'validation failed';
}

function envelope(
  code: ApiErrorCode | OAuthErrorCode,
  message: string,
  status: number,
  extra: Record<string, unknown> = {},
): ErrorResponse {
  return { status, body: { error: code, message, ...extra } };
}

/**
 * The `{error, message}` envelope of the end-user and admin APIs. The vocabulary of
 * request-shape errors differs per server (docs/http-api.md): a bad path or query
 * is `bad request` on the end-user server and `invalid request` on the admin server;
 * a bad body is `invalid request` and `invalid request body`. A route may name its own
 * (`@ValidationVocabulary`, read from the context).
 */
export class ApiExceptionFilter {
  present(failure: Failure, context: ErrorContext): ErrorResponse {
    switch (failure.kind) {
      case 'api': {
        const { code, message, details } = failure.error;
        const status = apiStatus(code);
        // A 500 never carries internal detail; a deliberate 503 keeps its message.
        if (status === 500) return envelope('internal error', internalErrorMessage(context.traceId), status);
        const response = envelope(code, message, status, details.length > 0 ? { details } : {});
        // RFC 9110 §10.2.3: a 429 says when a retry can succeed.
        const retryAfter = failure.error.retryAfterSeconds;
        return retryAfter === undefined ? response : { ...response, headers: { 'Retry-After': String(retryAfter) } };
      }
      case 'oauth':
        return envelope(failure.error.code, failure.error.description, oauthStatus(failure.error.code));
      case 'validation': {
        const { part, issues, message } = failure.error;
        const details = issues.map(({ field, problem }) => ({ field, problem }));
        // A route's own vocabulary (`bad request`) is answered exactly as that API error.
        if (context.validationCode !== undefined)
          return this.present({ kind: 'api', error: new ApiError(context.validationCode, message, details) }, context);
        return envelope(validationCode(part, issues, context), message, 400, { details });
      }
      case 'body':
        switch (failure.error.problem) {
          case 'malformed':
            return envelope(
              context.server === 'admin' ? 'invalid request body' : 'invalid request',
              failure.error.message,
              400,
            );
          case 'too_large':
            return envelope('payload too large', failure.error.message, 413);
          case 'unsupported_media_type':
            return envelope('unsupported media type', failure.error.message, 415);
          default:
            return assertNever(failure.error.problem, 'body problem');
        }
      case 'http': {
        const code = codeForStatus(failure.status, context);
        if (code === 'internal error') return envelope(code, internalErrorMessage(context.traceId), 500);
        if (code === 'not_found') return envelope(code, `no route ${context.method} ${context.path}`, 404);
        return envelope(code, code, failure.status);
      }
      case 'unexpected':
        return envelope('internal error', internalErrorMessage(context.traceId), 500);
      default:
        return assertNever(failure, 'failure');
    }
  }
}
