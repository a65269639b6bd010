import { ApiError, ApprovalError, type ApiErrorCode, type ApprovalErrorCode } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { TokenVaultError } from '@broker/vault';
import { USER_ERROR_VOCABULARY } from './error-vocabulary';

/** The end-user API's answer to a library refusal. */
function approvalApiError(error: ApprovalError | TokenVaultError): ApiError {
  return USER_ERROR_VOCABULARY.translate(error) as ApiError;
}

/** Every approvals refusal and the wire code the approvals API gives it (a new code fails to compile here until it is placed). */
const WIRE_CODES: Readonly<Record<ApprovalErrorCode, ApiErrorCode>> = {
  invalid_input: 'bad request',
  gateway_unauthenticated: 'unauthorized',
  gateway_not_authorized: 'forbidden',
  agent_not_registered: 'forbidden',
  agent_suspended: 'forbidden',
  grant_required: 'grant_required',
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

describe('the end-user API vocabulary of approvals refusals', () => {
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

describe('the end-user API vocabulary of a forced refresh', () => {
  it.each([
    [
      new TokenVaultError('no_session', 'no session with the service', 'mail'),
      'not_found',
      'no session with service mail',
    ],
    [
      new TokenVaultError('refresh_unavailable', 'the session has no refresh token: reconnect the service', 'mail'),
      'refresh_unavailable',
      'the session has no refresh token: reconnect the service',
    ],
    [
      new TokenVaultError('reauthentication_required', 'marked', 'mail'),
      'refresh_failed',
      'the provider refused the refresh token: reconnect the service',
    ],
    [
      new TokenVaultError('refresh_failed', 'the provider did not answer', 'mail'),
      'refresh_failed',
      'the provider did not answer',
    ],
  ] as const)('answers %s', (error, code, message) => {
    expect(approvalApiError(error)).toEqual(new ApiError(code, message));
  });
});

describe('the end-user API vocabulary and everything else', () => {
  it('passes every other failure through untouched', () => {
    const other = new Error('database down');
    expect(USER_ERROR_VOCABULARY.translate(other)).toBe(other);
    const already = new ApiError('bad request', 'the request body must be a JSON object');
    expect(USER_ERROR_VOCABULARY.translate(already)).toBe(already);
  });
});
