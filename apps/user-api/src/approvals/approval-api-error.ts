import { ApiError, ApprovalError, assertNever, type ApiErrorCode, type ApprovalErrorCode } from '@broker/domain';

/** The wire code of each approvals refusal (the filter gives each its status). */
function wireCode(code: ApprovalErrorCode): ApiErrorCode {
  switch (code) {
    // 400: `bad request` for every approvals validation failure (docs/approvals.md, "Errors") (gateways are written against it).
    case 'invalid_input':
      return 'bad request';
    // 401: missing or invalid gateway credentials.
    case 'gateway_unauthenticated':
      return 'unauthorized';
    // 403: the caller is known but may not do this.
    case 'gateway_not_authorized':
    case 'agent_not_registered':
    case 'approval_of_another_principal':
    case 'approval_of_another_agent':
      return 'forbidden';
    case 'approval_not_found':
      return 'not_found';
    // 410 for a pending approval past its TTL.
    case 'approval_expired':
      return 'gone';
    // 409: the approval's state no longer allows the decision.
    case 'approval_not_pending':
    case 'decision_raced':
      return 'conflict';
    // 422: well-formed, but the approval's rules refuse it.
    case 'pattern_invalid':
    case 'pattern_with_once':
      return 'invalid_pattern';
    case 'not_consumable':
      return 'not_consumable';
    case 'not_revocable':
      return 'not_revocable';
    // 429 with Retry-After (RFC 9110 §10.2.3).
    case 'pending_limit_reached':
    case 'request_rate_exceeded':
      return 'rate_limited';
    default:
      return assertNever(code, 'approval error code');
  }
}

/**
 * The end-user API's one mapping of approvals refusals to its wire codes (codes are
 * chosen at the edge: docs/architecture.md, "Errors"). Message, field details and `Retry-After` pass
 * through unchanged: docs/approvals.md states them, and they name only what the caller sent.
 */
export function approvalApiError(error: ApprovalError): ApiError {
  return new ApiError(wireCode(error.code), error.message, error.details, error.retryAfterSeconds);
}

/** Runs an approvals operation, answering its refusals in the end-user API's vocabulary. */
export async function inApprovalsVocabulary<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw error instanceof ApprovalError ? approvalApiError(error) : error;
  }
}
