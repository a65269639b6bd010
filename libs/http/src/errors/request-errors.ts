import type { FieldIssue } from '@broker/domain';

/** Where a request failed validation. */
export type RequestPart = 'body' | 'query' | 'param' | 'header';

/** A request's body, query, path or header failed its DTO validation. */
export class RequestValidationError extends Error {
  constructor(
    readonly part: RequestPart,
    readonly issues: readonly FieldIssue[],
  ) {
    super(issues.map((issue) => `${issue.field}: ${issue.problem}`).join('; ') || `invalid ${part}`);
    this.name = 'RequestValidationError';
  }
}

/** Why a request body could not be read. */
export type BodyProblem = 'malformed' | 'too_large' | 'unsupported_media_type';

/** The body could not be read at all (before any DTO validation). */
export class RequestBodyError extends Error {
  constructor(
    readonly problem: BodyProblem,
    message: string,
  ) {
    super(message);
    this.name = 'RequestBodyError';
  }
}
