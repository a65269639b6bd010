import { ApiError, OAuthError } from '@broker/domain';
import { HttpException } from '@nestjs/common';
import { RequestBodyError, RequestValidationError } from './request-errors';

/** Any thrown value, sorted into the kinds the two envelopes know how to present. */
export type Failure =
  | { readonly kind: 'api'; readonly error: ApiError }
  | { readonly kind: 'oauth'; readonly error: OAuthError }
  | { readonly kind: 'validation'; readonly error: RequestValidationError }
  | { readonly kind: 'body'; readonly error: RequestBodyError }
  | { readonly kind: 'http'; readonly status: number }
  | { readonly kind: 'unexpected'; readonly error: unknown };

export function classifyFailure(error: unknown): Failure {
  if (error instanceof ApiError) return { kind: 'api', error };
  if (error instanceof OAuthError) return { kind: 'oauth', error };
  if (error instanceof RequestValidationError) return { kind: 'validation', error };
  if (error instanceof RequestBodyError) return { kind: 'body', error };
  // Framework exceptions (unknown route, ...): only the status is trusted, never the text.
  if (error instanceof HttpException) return { kind: 'http', status: error.getStatus() };
  return { kind: 'unexpected', error };
}

/** What an envelope writer sends. */
export interface ErrorResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** `internal error (ref <trace id>)`: a 500 carries nothing else. */
export function internalErrorMessage(traceId: string): string {
  return `internal error (ref ${traceId})`;
}
