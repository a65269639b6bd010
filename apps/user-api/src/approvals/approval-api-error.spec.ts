import { ApiError, ApprovalError, type ApiErrorCode, type ApprovalErrorCode } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { approvalApiError, inApprovalsVocabulary } from './approval-api-error';

/** Every approvals refusal and the wire code the approvals API gives it (a new code fails to compile here until it is placed). */
const WIRE_CODES: Readonly<Record<ApprovalErrorCode, ApiErrorCode>> = {
  invalid_input: 'bad request',
  gateway_unauthenticated: 'unauthorized',
  gateway_not_authorized: 'forbidden',
  agent_not_registered: 'forbidden',
  approval_of_another_principal: 'forbidden',
  approval_of_another_agent: 'forbidden',
  approval_not_found: 'not_found',
  approval_expired: 'gone',
  approval_not_pending: 'conflict',
  decision_raced: 'conflict',
  pattern_invalid: 'invalid_pattern',
  pattern_with_once: 'invalid_pattern',
  not_consumable: 'not_consumable',
  not_revocable: 'not_revocable',
  pending_limit_reached: 'rate_limited',
  request_rate_exceeded: 'rate_limited',
};

describe('approvalApiError', () => {
  it.each(Object.entries(WIRE_CODES) as [ApprovalErrorCode, ApiErrorCode][])(
    'answers %s as %s, message unchanged',
    (code, wire) => {
      const answer = approvalApiError(new ApprovalError(code, `refused: ${code}`));
      expect(answer).toBeInstanceOf(ApiError);
      expect([answer.code, answer.message, answer.details, answer.retryAfterSeconds]).toEqual([
        wire,
        `refused: ${code}`,
        [],
        undefined,
      ]);
    },
  );

  it('keeps the field details of a refused value (400 bad request naming the field)', () => {
    const details = [{ field: 'X-Long-Poll-Timeout', problem: 'must be an integer from 1 to 120 (seconds)' }];
    const answer = approvalApiError(
      new ApprovalError('invalid_input', 'X-Long-Poll-Timeout must be an integer from 1 to 120 (seconds)', details),
    );
    expect(answer).toEqual(
      new ApiError('bad request', 'X-Long-Poll-Timeout must be an integer from 1 to 120 (seconds)', details),
    );
    expect(answer.details).toEqual(details);
  });

  it('keeps the field details of a refused params_pattern (422 invalid_pattern naming each entry)', () => {
    const details = [{ field: 'params_pattern.to', problem: 'does not match the reviewed value of this argument' }];
    const answer = approvalApiError(
      new ApprovalError(
        'pattern_invalid',
        'params_pattern.to: does not match the reviewed value of this argument',
        details,
      ),
    );
    expect([answer.code, answer.details]).toEqual(['invalid_pattern', details]);
  });

  it.each(['pending_limit_reached', 'request_rate_exceeded'] as const)(
    'answers %s as rate_limited with its Retry-After seconds',
    (code) => {
      const answer = approvalApiError(
        new ApprovalError(code, 'at most 3 approvals may be pending for one user and agent', [], 42),
      );
      expect([answer.code, answer.message, answer.details, answer.retryAfterSeconds]).toEqual([
        'rate_limited',
        'at most 3 approvals may be pending for one user and agent',
        [],
        42,
      ]);
    },
  );
});

describe('inApprovalsVocabulary', () => {
  it('turns an approvals refusal into the end-user API error', async () => {
    const refused = inApprovalsVocabulary(
      Promise.reject(new ApprovalError('approval_expired', 'approval a expired before it was decided')),
    );
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ code: 'gone', message: 'approval a expired before it was decided' });
  });

  it('passes the answer and every other failure through untouched', async () => {
    await expect(inApprovalsVocabulary(Promise.resolve('ok'))).resolves.toBe('ok');
    const other = new Error('database down');
    await expect(inApprovalsVocabulary(Promise.reject(other))).rejects.toBe(other);
    const already = new ApiError('bad request', 'the request body must be a JSON object');
    await expect(inApprovalsVocabulary(Promise.reject(already))).rejects.toBe(already);
  });
});
