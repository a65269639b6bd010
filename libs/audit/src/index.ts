/**
 * The audit log: credential-free structured records of security-relevant decisions (token
 * exchanges, impersonation, grants, approvals), written as log lines (`audit: true`, with the
 * request's trace id as `request_id`) for the operator's log pipeline and SIEM. It records
 * every attempt as it happens, an unauthenticated refusal included, and keeps nothing itself:
 * the logs' destination decides how long. It is not the activity ledger (@broker/events),
 * which stores business events in the database for the people they concern, administrators
 * and webhook receivers, only for authenticated requests and state changes, typed per kind
 * and kept for `events.retention`: the audit log serves operating the deployment, the ledger is
 * a feature of it (docs/security.md "What never leaks": what neither ever holds).
 */
export { AuditModule } from './audit.module';
export { AuditLog, type AuditEvent, type AuditValue } from './audit-log.service';
