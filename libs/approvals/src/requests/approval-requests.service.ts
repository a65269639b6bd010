import { AuditLog } from '@broker/audit';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApprovalError, Clock, Random, type ApprovalRecord, type RiskLevel } from '@broker/domain';
import { approvalEvent, approvalExpired, EventLedger, recordChange } from '@broker/events';
import { AgentRepository, ApprovalRepository } from '@broker/persistence';
import { currentTraceId } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import type { GatewayIdentity } from '../gateway/approval-gateway-auth';
import { argumentsHash } from '../patterns/canonical-json';
import { assertNotExpired, CREATION_WINDOW_MS, notFound } from '../approval-rules';

/** A gateway's request for a human decision, after the DTO's shape checks. */
export interface ApprovalRequestInput {
  readonly toolName: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly riskLevel: RiskLevel | undefined;
}

/** The outcome of a create: a new pending request (201) or the pending duplicate (200). */
export interface CreatedApproval {
  readonly record: ApprovalRecord;
  readonly created: boolean;
}

const AGENT_SESSION_ID_MAX = 255;

/** C0/C1 controls and lone surrogates: never part of a tool name or session id (storage and log safety). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\p{Cs}]/u;

/** docs/approvals.md "Grants and approvals": the agent may ask, and use an approval, only while the person allows it. */
function grantRequired(agentId: string): ApprovalError {
  return new ApprovalError(
    'grant_required',
    `agent ${agentId} has no active grant from this person: ask them to allow it in the console first`,
  );
}

/** docs/admin-api.md "Suspending an agent": a suspended agent neither asks nor uses an approval; they are kept for its resumption. */
function agentSuspended(agentId: string): ApprovalError {
  return new ApprovalError('agent_suspended', `agent suspended: an administrator suspended agent ${agentId}`);
}

function invalidInput(field: string, problem: string): ApprovalError {
  return new ApprovalError('invalid_input', `${field}: ${problem}`, [{ field, problem }]);
}

/**
 * The gateway side of an approval's life (docs/approvals.md): create a pending request,
 * consume an approved one-time approval, for a gateway whose credentials were verified
 * before anything else of the request was read (`ApprovalGatewayAuth`, in the controller's
 * guard): the identity is the subject token's principal and agent. Audit records name
 * principal, agent, tool and outcome, never arguments, metadata or credentials.
 */
@Injectable()
export class ApprovalRequests {
  private readonly pendingTtlMs: number;
  private readonly maxPending: number;
  private readonly maxPerMinute: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly approvals: ApprovalRepository,
    private readonly agents: AgentRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly ledger: EventLedger,
  ) {
    this.pendingTtlMs = config.approvals.pending_ttl;
    this.maxPending = config.approvals.rate_limit.max_pending_per_pair;
    this.maxPerMinute = config.approvals.rate_limit.max_requests_per_minute;
  }

  /**
   * Creates a pending request for the subject token's principal and agent, or returns the
   * pending duplicate (same principal, agent, tool name and arguments hash). The agent must be
   * registered (else 403 `forbidden`) and hold an active grant of the principal (else 403
   * `grant_required`: none, revoked or expired; checked under the pair's lock). At most
   * `approvals.rate_limit.max_pending_per_pair` pending and `max_requests_per_minute`
   * creations per minute per (principal, agent): else 429 with Retry-After.
   */
  async create(
    { principal, agentId, gateway }: GatewayIdentity,
    input: ApprovalRequestInput,
  ): Promise<CreatedApproval> {
    if (UNSAFE_TEXT.test(input.toolName)) throw invalidInput('tool_name', 'must not contain control characters');
    const agentSessionId = this.agentSessionId(input.metadata);
    if (await this.suspended(agentId)) {
      this.audit.record('approval_created', {
        principal,
        agent_id: agentId,
        tool_name: input.toolName,
        risk_level: input.riskLevel ?? null,
        approval_id: null,
        outcome: 'refused_agent_suspended',
      });
      throw agentSuspended(agentId);
    }
    const now = this.clock.now();
    // `approval.requested` (the gateway's) and the pair's stale pendings' `approval.expired`, in the create's transaction.
    const traceId = currentTraceId();
    const requested = recordChange(this.ledger, (record: ApprovalRecord) =>
      approvalEvent('approval.requested', record, { type: 'gateway', id: gateway }, traceId),
    );
    const expired = recordChange(this.ledger, approvalExpired);
    const outcome = await this.approvals.create(
      {
        id: this.random.uuid(),
        principal,
        agentId,
        toolName: input.toolName,
        argumentsJson: JSON.stringify(input.arguments),
        argumentsHash: argumentsHash(input.arguments),
        metadataJson: JSON.stringify(input.metadata),
        riskLevel: input.riskLevel ?? null,
        agentSessionId,
        expiresAt: new Date(now.getTime() + this.pendingTtlMs),
      },
      { maxPending: this.maxPending, maxPerWindow: this.maxPerMinute, windowMs: CREATION_WINDOW_MS },
      now,
      requested === undefined || expired === undefined ? undefined : { requested, expired },
    );
    const facts = { principal, agent_id: agentId, tool_name: input.toolName, risk_level: input.riskLevel ?? null };
    switch (outcome.kind) {
      case 'agent_unknown':
        this.audit.record('approval_created', { ...facts, approval_id: null, outcome: 'refused_unknown_agent' });
        throw new ApprovalError('agent_not_registered', 'the agent named by the subject token is not registered');
      case 'grant_required':
        // Audit only, like every refused create: the approvals API records no ledger event for a request that changed nothing.
        this.audit.record('approval_created', { ...facts, approval_id: null, outcome: 'refused_no_grant' });
        throw grantRequired(agentId);
      case 'rate_limited': {
        this.audit.record('approval_created', {
          ...facts,
          approval_id: null,
          outcome: `refused_${outcome.limit}_limit`,
        });
        const retryAfterSeconds = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
        if (outcome.limit === 'pending')
          throw new ApprovalError(
            'pending_limit_reached',
            `at most ${this.maxPending} approvals may be pending for one user and agent`,
            [],
            retryAfterSeconds,
          );
        throw new ApprovalError(
          'request_rate_exceeded',
          `at most ${this.maxPerMinute} approvals may be requested per minute for one user and agent`,
          [],
          retryAfterSeconds,
        );
      }
      case 'duplicate':
        this.audit.record('approval_created', {
          ...facts,
          approval_id: outcome.record.id,
          outcome: 'duplicate_of_pending',
        });
        return { record: outcome.record, created: false };
      case 'created':
        this.audit.record('approval_created', { ...facts, approval_id: outcome.record.id, outcome: 'created' });
        return { record: outcome.record, created: true };
    }
  }

  /**
   * An approved `once` approval becomes consumed; consuming it again is
   * 200 with the first consumption's time (two racing consumes: one transition, both 200).
   * Precedence: 404 unknown, 403 another principal's or agent's, 410 an expired
   * pending, 403 `grant_required` for an approved one whose grant expired, 422
   * `not_consumable` for a backchannel (CIBA) request and anything else (a revoked approval included: deleting the grant
   * revoked it).
   */
  async consume({ principal, agentId, gateway }: GatewayIdentity, id: string): Promise<ApprovalRecord> {
    // Nothing is consumed for a suspended agent: an approved call stays approved for its resumption.
    if (await this.suspended(agentId)) {
      this.audit.record('approval_consumed', {
        approval_id: id,
        principal,
        agent_id: agentId,
        tool_name: null,
        outcome: 'refused_agent_suspended',
      });
      throw agentSuspended(agentId);
    }
    const now = this.clock.now();
    const traceId = currentTraceId();
    const consumed = await this.approvals.consume(
      id,
      principal,
      agentId,
      now,
      recordChange(this.ledger, (record: ApprovalRecord) =>
        approvalEvent('approval.consumed', record, { type: 'gateway', id: gateway }, traceId),
      ),
    );
    if (consumed !== undefined) {
      this.audit.record('approval_consumed', {
        approval_id: id,
        principal,
        agent_id: agentId,
        tool_name: consumed.toolName,
        outcome: 'consumed',
      });
      return consumed;
    }
    const record = await this.approvals.findAnyOwner(id);
    if (record === undefined) throw notFound(id);
    if (record.principal !== principal)
      throw new ApprovalError('approval_of_another_principal', 'the approval belongs to another principal');
    // The approval was for one agent's call; another agent of the same user cannot use it.
    if (record.agentId !== agentId)
      throw new ApprovalError('approval_of_another_agent', 'the approval belongs to another agent');
    // A backchannel request (docs/ciba.md) is used by its token request, never consumed here.
    if (record.ciba !== null)
      throw new ApprovalError('not_consumable', 'a backchannel request is used at the token endpoint');
    if (record.consumed) return record;
    assertNotExpired(record, now);
    // Still approved and unconsumed, so the conditional write found no active grant (an expired one: a deleted
    // grant ended the approval, which is then `not_consumable` like any revoked one).
    if (record.status === 'approved' && record.persistence === 'once') {
      this.audit.record('approval_consumed', {
        approval_id: id,
        principal,
        agent_id: agentId,
        tool_name: record.toolName,
        outcome: 'refused_no_grant',
      });
      throw grantRequired(agentId);
    }
    throw new ApprovalError('not_consumable', 'only an approved one-time (persistence once) approval can be consumed');
  }

  /** The agent is suspended: read from `ClientCache`, which every replica clears on `registry_changed`. */
  private async suspended(agentId: string): Promise<boolean> {
    return ((await this.agents.findClient(agentId))?.agent.suspension ?? null) !== null;
  }

  /** `metadata.agent_session_id` (optional) scopes a `session` approval. */
  private agentSessionId(metadata: Readonly<Record<string, unknown>>): string | null {
    if (!Object.prototype.hasOwnProperty.call(metadata, 'agent_session_id')) return null;
    const value = metadata.agent_session_id;
    if (value === null) return null;
    if (
      typeof value !== 'string' ||
      value.length === 0 ||
      value.length > AGENT_SESSION_ID_MAX ||
      UNSAFE_TEXT.test(value)
    ) {
      throw invalidInput(
        'metadata.agent_session_id',
        `must be a string of 1-${AGENT_SESSION_ID_MAX} characters without control characters`,
      );
    }
    return value;
  }
}
