import { shownStatus, type ApprovalPair, type ScopePreview, type ShownStatus } from '@broker/approvals';
import type { ApprovalPersistence, ApprovalRecord, ParamsPattern, RiskLevel, SyncedApproval } from '@broker/domain';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** An approval record (API.md "Tool approvals"). */
export class ApprovalView {
  id!: string;
  principal!: string;
  agent_id!: string;
  agent_display_name!: string | null;
  tool_name!: string;
  arguments!: Record<string, unknown>;
  metadata!: Record<string, unknown>;
  risk_level!: RiskLevel | null;
  status!: ShownStatus;
  persistence!: ApprovalPersistence | null;
  /** Argument name → glob; null: only the reviewed values (matched by arguments_hash). */
  params_pattern!: Record<string, string> | null;
  agent_session_id!: string | null;
  consumed!: boolean;
  created_at!: string;
  approved_at!: string | null;
  denied_at!: string | null;
  consumed_at!: string | null;
  revoked_at!: string | null;
  /** Pending: when it expires; one-time denial: when it leaves the sync state. */
  expires_at!: string | null;
  approval_url!: string;
}

export class ApprovalResponse {
  data!: ApprovalView;
}

export class ApprovalListResponse {
  data!: ApprovalView[];
}

export function toApprovalView(record: ApprovalRecord, approvalUrl: string): ApprovalView {
  return {
    id: record.id,
    principal: record.principal,
    agent_id: record.agentId,
    agent_display_name: record.agentDisplayName ?? null,
    tool_name: record.toolName,
    arguments: { ...record.arguments },
    metadata: { ...record.metadata },
    risk_level: record.riskLevel,
    status: shownStatus(record),
    persistence: record.persistence,
    params_pattern: record.paramsPattern === null ? null : { ...record.paramsPattern },
    agent_session_id: record.agentSessionId,
    consumed: record.consumed,
    created_at: record.createdAt.toISOString(),
    approved_at: iso(record.approvedAt),
    denied_at: iso(record.deniedAt),
    consumed_at: iso(record.consumedAt),
    revoked_at: iso(record.revokedAt),
    expires_at: iso(record.expiresAt),
    approval_url: approvalUrl,
  };
}

/** The create answer: 201 new, 200 the pending duplicate. */
export class CreatedApprovalView {
  id!: string;
  status!: 'pending';
  approval_url!: string;
  created_at!: string;
}

export class CreatedApprovalResponse {
  data!: CreatedApprovalView;
}

export class ApprovedView {
  id!: string;
  status!: 'approved';
  persistence!: ApprovalPersistence;
  approved_at!: string;
}

export class ApprovedResponse {
  data!: ApprovedView;
}

export class DeniedView {
  id!: string;
  status!: 'denied';
  persistence!: 'once' | 'permanent';
  denied_at!: string;
}

export class DeniedResponse {
  data!: DeniedView;
}

export class ConsumedView {
  id!: string;
  consumed!: true;
  consumed_at!: string;
}

export class ConsumedResponse {
  data!: ConsumedView;
}

export class RevokedView {
  id!: string;
  status!: 'revoked';
  revoked_at!: string;
}

export class RevokedResponse {
  data!: RevokedView;
}

export class ScopePreviewView {
  /** The exact tool name. */
  tool_pattern!: string;
  /** null: only the reviewed values; `{}`: every argument unconstrained. */
  params_pattern!: Record<string, string> | null;
  /** The scope in words. */
  preview!: string;
}

export class ScopePreviewResponse {
  data!: ScopePreviewView;
}

/** One approval in the sync state (API.md "Summary"). */
export class ApprovalSummaryView {
  id!: string;
  tool_name!: string;
  /** SHA-256 hex of the canonical JSON (RFC 8785) of the arguments. */
  arguments_hash!: string;
  /** The exact tool name. */
  tool_pattern!: string;
  params_pattern!: Record<string, string> | null;
  status!: 'pending' | 'approved' | 'denied';
  persistence!: ApprovalPersistence | null;
  consumed!: boolean;
  agent_session_id!: string | null;
  approved_at!: string | null;
}

export class ApprovalPairView {
  principal!: string;
  agent_id!: string;
  approvals!: ApprovalSummaryView[];
}

export class ApprovalSyncView {
  pairs!: ApprovalPairView[];
}

export class ApprovalSyncResponse {
  data!: ApprovalSyncView;
}

const patternView = (pattern: ParamsPattern | null): Record<string, string> | null => (pattern === null ? null : { ...pattern });

function toSummaryView(approval: SyncedApproval): ApprovalSummaryView {
  return {
    id: approval.id,
    tool_name: approval.toolName,
    arguments_hash: approval.argumentsHash,
    tool_pattern: approval.toolName,
    params_pattern: patternView(approval.paramsPattern),
    status: approval.status,
    persistence: approval.persistence,
    consumed: approval.consumed,
    agent_session_id: approval.agentSessionId,
    approved_at: iso(approval.approvedAt),
  };
}

export function toSyncView(pairs: readonly ApprovalPair[]): ApprovalSyncView {
  return { pairs: pairs.map((pair) => ({ principal: pair.principal, agent_id: pair.agentId, approvals: pair.approvals.map(toSummaryView) })) };
}

export function toScopePreviewView(preview: ScopePreview): ScopePreviewView {
  return { tool_pattern: preview.toolPattern, params_pattern: patternView(preview.paramsPattern), preview: preview.preview };
}

export function toCreatedView(record: ApprovalRecord, approvalUrl: string): CreatedApprovalView {
  return { id: record.id, status: 'pending', approval_url: approvalUrl, created_at: record.createdAt.toISOString() };
}

/** A transition's time and persistence are set by the transition itself: their absence is a bug, not a value. */
function set<T>(value: T | null, field: string): T {
  if (value === null) throw new Error(`approval ${field} missing after its transition`);
  return value;
}

export function toApprovedView(record: ApprovalRecord): ApprovedView {
  return { id: record.id, status: 'approved', persistence: set(record.persistence, 'persistence'), approved_at: set(record.approvedAt, 'approved_at').toISOString() };
}

export function toDeniedView(record: ApprovalRecord): DeniedView {
  return { id: record.id, status: 'denied', persistence: record.persistence === 'permanent' ? 'permanent' : 'once', denied_at: set(record.deniedAt, 'denied_at').toISOString() };
}

export function toConsumedView(record: ApprovalRecord): ConsumedView {
  return { id: record.id, consumed: true, consumed_at: set(record.consumedAt, 'consumed_at').toISOString() };
}

export function toRevokedView(record: ApprovalRecord): RevokedView {
  return { id: record.id, status: 'revoked', revoked_at: set(record.revokedAt, 'revoked_at').toISOString() };
}
