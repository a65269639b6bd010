import { ApprovalError, type ApprovalRecord } from '@broker/domain';

/** The window of `approvals.rate_limit.max_requests_per_minute`. */
export const CREATION_WINDOW_MS = 60_000;

/** The wire status of a record; an expired pending is never shown (410). */
export type ShownStatus = 'pending' | 'approved' | 'denied' | 'revoked';

/** A pending request past `approvals.pending_ttl`, swept or not yet. */
export function isExpiredPending(record: ApprovalRecord, now: Date): boolean {
  return (
    record.status === 'expired' ||
    (record.status === 'pending' && record.expiresAt !== null && record.expiresAt.getTime() <= now.getTime())
  );
}

/** A pending approval past its TTL answers 410 `gone` on every later operation. */
export function assertNotExpired(record: ApprovalRecord, now: Date): void {
  if (isExpiredPending(record, now))
    throw new ApprovalError('approval_expired', `approval ${record.id} expired before it was decided`);
}

/** Only a pending approval can be approved or denied (else 409 `conflict`). */
export function assertPending(record: ApprovalRecord): void {
  if (record.status !== 'pending')
    throw new ApprovalError('approval_not_pending', `approval ${record.id} is not pending (it was already decided)`);
}

/** The status as the API shows it. */
export function shownStatus(record: ApprovalRecord): ShownStatus {
  return record.status === 'expired' ? 'pending' : record.status;
}

/** No approval `id` for the caller (404 at the edge). */
export function notFound(id: string): ApprovalError {
  return new ApprovalError('approval_not_found', `no approval ${id}`);
}
