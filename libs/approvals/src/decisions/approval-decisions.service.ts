import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import {
  ApprovalError,
  Clock,
  type Principal,
  type ApprovalPersistence,
  type ApprovalRecord,
  type ParamsPattern,
} from '@broker/domain';
import {
  approvalEvent,
  approvalExpired,
  EventLedger,
  recordChange,
  type ApprovalEventType,
  type EventActor,
} from '@broker/events';
import { ApprovalRepository, type WithinTransaction } from '@broker/persistence';
import { currentTraceId } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import { assertNotExpired, assertPending, notFound } from '../approval-rules';
import { assertCoversReviewed, parseParamsPattern, renderScope } from '../patterns/params-pattern';

/** The transaction of a grant's deletion, which the pair's approvals end in. */
type Transaction = Parameters<WithinTransaction<unknown>>[1];

/** A user's approval decision (docs/approvals.md). */
export interface ApproveInput {
  readonly persistence: ApprovalPersistence;
  /** undefined or null: omitted (only the reviewed values). */
  readonly paramsPattern: Readonly<Record<string, unknown>> | null | undefined;
}

/** What an approval with this pattern would cover. */
export interface ScopePreview {
  /** The exact tool name. */
  readonly toolPattern: string;
  /** null: only the reviewed argument values (matched by `arguments_hash`). */
  readonly paramsPattern: ParamsPattern | null;
  /** The scope in words, without argument values. */
  readonly preview: string;
}

/**
 * The user's side of an approval (principal header or session cookie): read, decide,
 * preview, revoke. Another principal's approval is 404 like an unknown one (no existence
 * leak). Precedence on every operation: 404, then 410 for an expired pending, then the
 * state rule (409 `conflict`, 422 `not_revocable`), then the pattern (422 `invalid_pattern`).
 */
@Injectable()
export class ApprovalDecisions {
  private readonly pendingTtlMs: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly approvals: ApprovalRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly ledger: EventLedger,
  ) {
    this.pendingTtlMs = config.approvals.pending_ttl;
  }

  pending(principal: Principal): Promise<ApprovalRecord[]> {
    return this.approvals.listPending(principal.id, this.clock.now());
  }

  permanent(principal: Principal): Promise<ApprovalRecord[]> {
    return this.approvals.listPermanent(principal.id);
  }

  async get(principal: Principal, id: string): Promise<ApprovalRecord> {
    const record = await this.approvals.find(id, principal.id);
    if (record === undefined) throw notFound(id);
    assertNotExpired(record, this.clock.now());
    return record;
  }

  /**
   * pending → approved. `once` takes no pattern (even `{}` is 422 `invalid_pattern`);
   * `session` needs the request's `metadata.agent_session_id`; a pattern must cover the
   * reviewed arguments. Omitted: only the reviewed values (stored as null).
   */
  async approve(principal: Principal, id: string, input: ApproveInput): Promise<ApprovalRecord> {
    const now = this.clock.now();
    const record = await this.decidable(principal, id, now);
    // A session approval is listed only for its agent session: without one it could never apply.
    if (input.persistence === 'session' && record.agentSessionId === null) {
      throw new ApprovalError(
        'invalid_input',
        'persistence session needs a request made with metadata.agent_session_id',
        [{ field: 'persistence', problem: 'the request carries no agent_session_id' }],
      );
    }
    const pattern = this.patternFor(record, input);
    const approved = await this.approvals.approve(
      id,
      principal.id,
      input.persistence,
      pattern,
      now,
      this.decided('approval.approved', { type: 'principal', id: principal.id }),
    );
    if (approved === undefined) return this.lostRace(principal, id, now);
    this.audit.record('approval_approved', {
      approval_id: id,
      principal: principal.id,
      agent_id: approved.agentId,
      tool_name: approved.toolName,
      persistence: input.persistence,
      constrained_arguments: pattern === null ? null : Object.keys(pattern),
      outcome: 'approved',
    });
    return approved;
  }

  /** Changes nothing: the scope an approval with `paramsPattern` would have, or the same 4xx approve would give. */
  async preview(
    principal: Principal,
    id: string,
    paramsPattern: Readonly<Record<string, unknown>> | null | undefined,
  ): Promise<ScopePreview> {
    const record = await this.decidable(principal, id, this.clock.now());
    const pattern = this.patternFor(record, { persistence: 'permanent', paramsPattern });
    return { toolPattern: record.toolName, paramsPattern: pattern, preview: renderScope(record.toolName, pattern) };
  }

  /**
   * pending → denied. `permanent` stands until revoked (listed with the permanent
   * approvals); a one-time denial stays in the gateways' sync state for
   * `approvals.pending_ttl`, long enough for the waiting gateway to see it, then leaves.
   */
  async deny(principal: Principal, id: string, persistence: 'permanent' | undefined): Promise<ApprovalRecord> {
    const now = this.clock.now();
    await this.decidable(principal, id, now);
    const kind = persistence ?? 'once';
    const denied = await this.approvals.deny(
      id,
      principal.id,
      kind,
      kind === 'once' ? new Date(now.getTime() + this.pendingTtlMs) : null,
      now,
      this.decided('approval.denied', { type: 'principal', id: principal.id }),
    );
    if (denied === undefined) return this.lostRace(principal, id, now);
    this.audit.record('approval_denied', {
      approval_id: id,
      principal: principal.id,
      agent_id: denied.agentId,
      tool_name: denied.toolName,
      persistence: kind,
      outcome: 'denied',
    });
    return denied;
  }

  /**
   * A permanent approval or denial → revoked; it leaves the sync state. Revoking it again
   * answers the first revocation (a double click is not an error); anything that is not a
   * permanent decision is 422 `not_revocable`.
   */
  async revoke(principal: Principal, id: string): Promise<ApprovalRecord> {
    const now = this.clock.now();
    const revoked = await this.approvals.revoke(
      id,
      principal.id,
      now,
      this.decided('approval.revoked', { type: 'principal', id: principal.id }),
    );
    if (revoked !== undefined) {
      this.audit.record('approval_revoked', {
        approval_id: id,
        principal: principal.id,
        agent_id: revoked.agentId,
        tool_name: revoked.toolName,
        persistence: 'permanent',
        outcome: 'revoked',
      });
      return revoked;
    }
    const record = await this.approvals.find(id, principal.id);
    if (record === undefined) throw notFound(id);
    assertNotExpired(record, now);
    if (record.status === 'revoked') return record;
    throw new ApprovalError('not_revocable', 'only a permanent approval or denial can be revoked');
  }

  /**
   * The person's grant for the agent is being deleted, in `transaction`: every live approval
   * of the pair ends with it (docs/approvals.md "Grants and approvals"), each with its own
   * `approval.revoked` event (the person is the actor), or `approval.expired` for a pending
   * request already past its TTL. Returns how many ended; re-granting brings none back.
   * `actor`: who revoked the grant (an administrator revoking a person's grant), the person by default.
   */
  async endWithGrant(
    principal: Principal,
    agentId: string,
    now: Date,
    transaction: Transaction,
    actor: EventActor = { type: 'principal', id: principal.id },
  ): Promise<number> {
    const revoked = this.decided('approval.revoked', actor);
    const expired = recordChange(this.ledger, approvalExpired);
    const ended = await this.approvals.endPair(
      principal.id,
      agentId,
      now,
      transaction,
      revoked === undefined || expired === undefined ? undefined : { revoked, expired },
    );
    return ended.revoked.length + ended.expired.length;
  }

  /** The actor's decision (the person's, or an administrator's revocation) as a ledger event, recorded in the decision's transaction. */
  private decided(type: ApprovalEventType, actor: EventActor) {
    const traceId = currentTraceId();
    return recordChange(this.ledger, (record: ApprovalRecord) => approvalEvent(type, record, actor, traceId));
  }

  /** The principal's pending, unexpired approval: else 404, 410 or 409. */
  private async decidable(principal: Principal, id: string, now: Date): Promise<ApprovalRecord> {
    const record = await this.approvals.find(id, principal.id);
    if (record === undefined) throw notFound(id);
    assertNotExpired(record, now);
    assertPending(record);
    return record;
  }

  private patternFor(record: ApprovalRecord, input: ApproveInput): ParamsPattern | null {
    if (input.paramsPattern === undefined || input.paramsPattern === null) return null;
    // params_pattern with persistence once (even an empty object) gives 422 invalid_pattern.
    if (input.persistence === 'once')
      throw new ApprovalError(
        'pattern_with_once',
        'a one-time approval covers only the reviewed call: params_pattern is not allowed with persistence once',
        [{ field: 'params_pattern', problem: 'not allowed with persistence once' }],
      );
    const pattern = parseParamsPattern(input.paramsPattern);
    assertCoversReviewed(pattern, record.arguments);
    return pattern;
  }

  /** The conditional UPDATE found the approval no longer pending: say why, as a fresh read shows it. */
  private async lostRace(principal: Principal, id: string, now: Date): Promise<never> {
    const record = await this.approvals.find(id, principal.id);
    if (record === undefined) throw notFound(id);
    assertNotExpired(record, now);
    assertPending(record);
    throw new ApprovalError('decision_raced', `approval ${id} changed while it was being decided`);
  }
}
