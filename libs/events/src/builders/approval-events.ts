import type { ApprovalRecord } from '@broker/domain';
import type { AnyBrokerEvent, ApprovalEventDetails, EventActor } from '../catalogue/event-catalogue';

/** The approval kinds of the activity ledger. */
export type ApprovalEventType =
  | 'approval.requested'
  | 'approval.approved'
  | 'approval.denied'
  | 'approval.consumed'
  | 'approval.revoked'
  | 'approval.expired';

/**
 * What an approval event says about the tool call: its name, risk, the argument
 * names and the stored `arguments_hash` (SHA-256 hex of the canonical JSON of the arguments,
 * `argumentsHash`), never an argument's value.
 */
export function approvalEventDetails(record: ApprovalRecord): ApprovalEventDetails {
  return {
    approval_id: record.id,
    tool_name: record.toolName,
    risk_level: record.riskLevel,
    argument_names: Object.keys(record.arguments).sort(),
    arguments_sha256: record.argumentsHash,
  };
}

/**
 * The ledger event of an approval change, for the approval's principal and agent.
 * `actor`: the gateway (requested, consumed), the principal (approved, denied, revoked) or
 * the broker (expired, with no trace id: it is the broker's own work).
 */
export function approvalEvent(
  type: ApprovalEventType,
  record: ApprovalRecord,
  actor: EventActor,
  traceId: string | null,
): AnyBrokerEvent {
  const common = {
    actor,
    principal: record.principal,
    agentId: record.agentId,
    serviceId: null,
    outcome: 'success',
    traceId,
  } as const;
  const details = approvalEventDetails(record);
  if (type === 'approval.approved')
    return { ...common, type, details: { ...details, persistence: record.persistence ?? 'once' } };
  return { ...common, type, details };
}

/**
 * A backchannel request (docs/ciba.md) answered at once by the person's remembered permanent
 * decision `rememberedId`: the broker applied it, and the event names it.
 */
export function approvalAnsweredByRemembered(
  record: ApprovalRecord,
  rememberedId: string,
  traceId: string | null,
): AnyBrokerEvent {
  const event = approvalEvent(
    record.status === 'denied' ? 'approval.denied' : 'approval.approved',
    record,
    { type: 'broker', id: null },
    traceId,
  );
  return { ...event, details: { ...event.details, remembered_approval_id: rememberedId } } as AnyBrokerEvent;
}

/** The expiry of a pending request: the broker's own work (the expiry sweeper, or a create expiring the pair's stale requests first). */
export function approvalExpired(record: ApprovalRecord): AnyBrokerEvent {
  return approvalEvent('approval.expired', record, { type: 'broker', id: null }, null);
}
