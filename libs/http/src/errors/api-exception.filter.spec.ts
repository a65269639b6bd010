import { ApiError } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { ApiExceptionFilter } from './api-exception.filter';
import type { ErrorContext } from './error-context';
import { classifyFailure } from './failure';
import { RequestValidationError } from './request-errors';

const filter = new ApiExceptionFilter();
const enduser: ErrorContext = {
  server: 'enduser',
  traceId: '0af7651916cd43dd8448eb211c80319c',
  method: 'POST',
  path: '/api/approvals',
};
const approvals: ErrorContext = { ...enduser, validationCode: 'bad request' };

function present(error: unknown, context: ErrorContext): ReturnType<ApiExceptionFilter['present']> {
  return filter.present(classifyFailure(error), context);
}

describe('ApiExceptionFilter validation vocabulary', () => {
  it('answers an end-user body validation failure as invalid request and a query one as bad request (docs/http-api.md)', () => {
    const issues = [
      { field: 'persistence', problem: 'must be one of the following values: permanent', constraint: 'isIn' },
    ];
    expect(present(new RequestValidationError('body', issues), enduser)).toEqual({
      status: 400,
      body: {
        error: 'invalid request',
        message: 'persistence: must be one of the following values: permanent',
        details: [{ field: 'persistence', problem: 'must be one of the following values: permanent' }],
      },
    });
    expect(present(new RequestValidationError('query', issues), enduser).body.error).toBe('bad request');
  });

  it.each(['body', 'query', 'param'] as const)(
    'answers a %s validation failure of a route naming its own code exactly as that API error (bad request)',
    (part) => {
      const issues = [
        { field: 'persistence', problem: 'must be empty: this operation takes no request body', constraint: 'isEmpty' },
      ];
      const failure = new RequestValidationError(part, issues);
      const answer = present(failure, approvals);
      expect(answer).toEqual(
        present(
          new ApiError('bad request', failure.message, [
            { field: 'persistence', problem: 'must be empty: this operation takes no request body' },
          ]),
          approvals,
        ),
      );
      expect(answer).toEqual({
        status: 400,
        body: {
          error: 'bad request',
          message: 'persistence: must be empty: this operation takes no request body',
          details: [{ field: 'persistence', problem: 'must be empty: this operation takes no request body' }],
        },
      });
    },
  );

  it('sends no details for a route-vocabulary failure without issues, as the API error did', () => {
    expect(present(new RequestValidationError('body', []), approvals)).toEqual({
      status: 400,
      body: { error: 'bad request', message: 'invalid body' },
    });
  });
});
