import { currentTraceId } from '@broker/telemetry';
import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

/** Audit event names (docs/architecture.md). Later features add theirs here. */
export type AuditEvent =
  | 'impersonation_decision'
  | 'enterprise_access_decision'
  | 'token_exchange'
  | 'ciba_request'
  | 'grant_created'
  | 'grant_replaced'
  | 'grant_deleted'
  | 'enterprise_access_revoked'
  | 'approval_created'
  | 'approval_approved'
  | 'approval_denied'
  | 'approval_consumed'
  | 'approval_revoked';

/** Values an audit record may hold: identifiers and outcomes, never credentials. */
export type AuditValue = string | number | boolean | null | readonly string[];

/** Field names that would suggest a credential is being recorded. */
const FORBIDDEN = /(token|secret|assertion|password|private|key|jwk|cookie|authorization|code_verifier)/i;

/**
 * Credential-free structured audit records, written as log lines with `audit: true`
 * and the request's trace id (`request_id`). A field whose name suggests a credential
 * is refused at run time as well as redacted by the logger, so a mistake is loud.
 */
@Injectable()
export class AuditLog {
  constructor(private readonly logger: PinoLogger) {
    logger.setContext('audit');
  }

  /** Writes one record; `request_id` is the current request's trace id. */
  record(event: AuditEvent, fields: Readonly<Record<string, AuditValue>>): void {
    const safe: Record<string, AuditValue> = {};
    for (const [name, value] of Object.entries(fields)) {
      if (FORBIDDEN.test(name)) throw new Error(`audit field "${name}" looks like a credential and is not recorded`);
      safe[name] = value;
    }
    this.logger.info({ audit: true, event, request_id: currentTraceId(), ...safe }, `audit ${event}`);
  }
}
