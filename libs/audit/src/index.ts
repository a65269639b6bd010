/** Credential-free audit records (docs/architecture.md). */
export { AuditModule } from './audit.module';
export { AuditLog, type AuditEvent, type AuditValue } from './audit-log.service';
