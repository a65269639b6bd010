/** Credential-free audit records (SPEC.md "Events"). */
export { AuditModule } from './audit.module';
export { AuditLog, type AuditEvent, type AuditValue } from './audit-log.service';
