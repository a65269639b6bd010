import type { FieldIssue } from '../api-error';

/**
 * Why the approvals rules refused an operation (docs/approvals.md).
 * The approvals lib names the rule; the end-user API alone chooses the wire code, status and
 * `Retry-After` (error codes are chosen only at the edge: docs/architecture.md, "Errors").
 */
export type ApprovalErrorCode =
  /** A value the gateway or user sent breaks an approvals rule (control characters, a bad header, a filter over its cap). */
  | 'invalid_input'
  /** The gateway's credentials are missing or do not verify (never naming the trust source). */
  | 'gateway_unauthenticated'
  /** An authorization expression said no to the gateway. */
  | 'gateway_not_authorized'
  /** The subject token names an agent the registry does not have. */
  | 'agent_not_registered'
  /** An administrator suspended the agent: it may not ask for or use an approval until resumed (docs/admin-api.md "Suspending an agent"). */
  | 'agent_suspended'
  /** The person has no active grant for the agent (none, revoked or expired): the agent may not ask or use an approval. */
  | 'grant_required'
  /** Consume: the approval was made for another principal. */
  | 'approval_of_another_principal'
  /** Consume: the approval was made for another agent of the same principal. */
  | 'approval_of_another_agent'
  /** No approval with this id for the caller (another principal's is not found either: no existence leak). */
  | 'approval_not_found'
  /** A pending approval past `approvals.pending_ttl`. */
  | 'approval_expired'
  /** Only a pending approval can be approved or denied. */
  | 'approval_not_pending'
  /** The approval changed between the read and the conditional write of a decision. */
  | 'decision_raced'
  /** A `params_pattern` over its caps, or one not covering the reviewed arguments. */
  | 'pattern_invalid'
  /** A one-time approval covers only the reviewed call: it takes no `params_pattern`. */
  | 'pattern_with_once'
  /** Only an approved one-time approval can be consumed. */
  | 'not_consumable'
  /** Only a permanent approval or denial can be revoked. */
  | 'not_revocable'
  /** `approvals.rate_limit.max_pending_per_pair` pending requests already wait for one principal and agent. */
  | 'pending_limit_reached'
  /** `approvals.rate_limit.max_requests_per_minute` creations in the last minute for one principal and agent. */
  | 'request_rate_exceeded';

/** An approvals operation refused by a rule; `message` and `details` are safe to send as they are. */
export class ApprovalError extends Error {
  constructor(
    readonly code: ApprovalErrorCode,
    message: string,
    /** The fields that broke the rule, for `invalid_input` and the pattern codes. */
    readonly details: readonly FieldIssue[] = [],
    /** For the two rate limits: seconds until a retry can succeed. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApprovalError';
  }
}
