import {
  MAX_PATTERN_BYTES,
  MAX_PATTERN_ENTRIES,
  shownStatus,
  type ApprovalPair,
  type ScopePreview,
  type ShownStatus,
} from '@broker/approvals';
import type { ApprovalPersistence, ApprovalRecord, ParamsPattern, RiskLevel, SyncedApproval } from '@broker/domain';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

// The contract's shapes (docs/approvals.md): ids are UUIDs, times RFC 3339, and an
// absent value is null, never omitted (docs/http-api.md), so nullable fields stay required.
const UUID: ApiPropertyOptions = { type: String, format: 'uuid' };
const TIME: ApiPropertyOptions = { type: String, format: 'date-time' };
const TIME_OR_NULL: ApiPropertyOptions = { type: String, format: 'date-time', nullable: true };
const PERSISTENCE_OR_NULL: ApiPropertyOptions = {
  enum: ['once', 'session', 'permanent'],
  nullable: true,
  description: 'null until the approval is decided',
};
/** Argument name → glob (docs/approvals.md); null: only the reviewed values, matched by `arguments_hash`. */
const PATTERN_OR_NULL: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: MAX_PATTERN_BYTES },
  maxProperties: MAX_PATTERN_ENTRIES,
  nullable: true,
};
/** A JSON object kept exactly as the gateway sent it: any keys (open, unlike the records around it). */
const FREE_FORM: ApiPropertyOptions = { type: 'object', additionalProperties: true };

/** An approval record (docs/approvals.md). */
export class ApprovalView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ minLength: 1, maxLength: 200 })
  principal!: string;
  @ApiProperty(UUID)
  agent_id!: string;
  /** The agent's display name at the time of reading; null when not known. */
  @ApiProperty({ type: String, nullable: true })
  agent_display_name!: string | null;
  @ApiProperty({ minLength: 1, maxLength: 255 })
  tool_name!: string;
  /** The tool call's arguments, exactly as the gateway sent them. */
  @ApiProperty(FREE_FORM)
  arguments!: Record<string, unknown>;
  /** The gateway's context for the reviewer, exactly as sent. */
  @ApiProperty(FREE_FORM)
  metadata!: Record<string, unknown>;
  /** null when the gateway gave none. */
  @ApiProperty({ enum: ['low', 'medium', 'critical'], nullable: true })
  risk_level!: RiskLevel | null;
  @ApiProperty({ enum: ['pending', 'approved', 'denied', 'revoked'] })
  status!: ShownStatus;
  @ApiProperty(PERSISTENCE_OR_NULL)
  persistence!: ApprovalPersistence | null;
  /** Argument name → glob; null: only the reviewed values (matched by arguments_hash). */
  @ApiProperty(PATTERN_OR_NULL)
  params_pattern!: Record<string, string> | null;
  /** The request's `metadata.agent_session_id`; null when it named none. */
  @ApiProperty({ type: String, nullable: true, minLength: 1, maxLength: 255 })
  agent_session_id!: string | null;
  consumed!: boolean;
  @ApiProperty(TIME)
  created_at!: string;
  @ApiProperty(TIME_OR_NULL)
  approved_at!: string | null;
  @ApiProperty(TIME_OR_NULL)
  denied_at!: string | null;
  @ApiProperty(TIME_OR_NULL)
  consumed_at!: string | null;
  @ApiProperty(TIME_OR_NULL)
  revoked_at!: string | null;
  /** Pending: when it expires; one-time denial: when it leaves the sync state. */
  @ApiProperty(TIME_OR_NULL)
  expires_at!: string | null;
  /** The approval page of the consent UI (`<consent_ui_url>/approvals/<id>`). */
  @ApiProperty({ format: 'uri' })
  approval_url!: string;
  /** How the call was asked for: the approvals API (`gateway`) or a backchannel authentication request (`ciba`, docs/ciba.md). */
  @ApiProperty({ enum: ['gateway', 'ciba'] })
  requested_via!: 'gateway' | 'ciba';
  /** The words the agent shows the person too (OpenID CIBA `binding_message`); null when none was sent. */
  @ApiProperty({ type: String, nullable: true, minLength: 1, maxLength: 100 })
  binding_message!: string | null;
  /**
   * A backchannel request's RFC 9396 `authorization_details`: its one `urn:agent-identity-broker:tool-call`
   * entry, exactly as an approved token carries it (docs/ciba.md); null for the approvals API's requests.
   */
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    nullable: true,
    minItems: 1,
    maxItems: 1,
  })
  authorization_details!: Record<string, unknown>[] | null;
  /**
   * The display name of the MCP server the entry's `locations` names, as registered; null for the
   * approvals API's requests, or when no MCP server is registered at that URI any more.
   */
  @ApiProperty({ type: String, nullable: true })
  mcp_server_display_name!: string | null;
}

export class ApprovalResponse {
  data!: ApprovalView;
}

export class ApprovalListResponse {
  data!: ApprovalView[];
}

/** The MCP server a backchannel request names (`locations[0]` of its entry); undefined for the approvals API's. */
export function mcpServerUriOf(record: ApprovalRecord): string | undefined {
  if (record.ciba === null) return undefined;
  const entry = JSON.parse(record.ciba.authorizationDetailsJson) as { locations?: unknown };
  const location = Array.isArray(entry.locations) ? (entry.locations[0] as unknown) : undefined;
  return typeof location === 'string' ? location : undefined;
}

export function toApprovalView(
  record: ApprovalRecord,
  approvalUrl: string,
  mcpServerDisplayName: string | null = null,
): ApprovalView {
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
    requested_via: record.ciba === null ? 'gateway' : 'ciba',
    binding_message: record.ciba?.bindingMessage ?? null,
    authorization_details:
      record.ciba === null ? null : [JSON.parse(record.ciba.authorizationDetailsJson) as Record<string, unknown>],
    mcp_server_display_name: record.ciba === null ? null : mcpServerDisplayName,
  };
}

/** The create answer: 201 new, 200 the pending duplicate. */
export class CreatedApprovalView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ enum: ['pending'] })
  status!: 'pending';
  /** The approval page of the consent UI, for the user. */
  @ApiProperty({ format: 'uri' })
  approval_url!: string;
  @ApiProperty(TIME)
  created_at!: string;
}

export class CreatedApprovalResponse {
  data!: CreatedApprovalView;
}

export class ApprovedView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ enum: ['approved'] })
  status!: 'approved';
  @ApiProperty({ enum: ['once', 'session', 'permanent'] })
  persistence!: ApprovalPersistence;
  @ApiProperty(TIME)
  approved_at!: string;
}

export class ApprovedResponse {
  data!: ApprovedView;
}

export class DeniedView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ enum: ['denied'] })
  status!: 'denied';
  @ApiProperty({ enum: ['once', 'permanent'] })
  persistence!: 'once' | 'permanent';
  @ApiProperty(TIME)
  denied_at!: string;
}

export class DeniedResponse {
  data!: DeniedView;
}

export class ConsumedView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ type: Boolean, enum: [true] })
  consumed!: true;
  /** The first consumption's time (a repeated consume answers the same). */
  @ApiProperty(TIME)
  consumed_at!: string;
}

export class ConsumedResponse {
  data!: ConsumedView;
}

export class RevokedView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ enum: ['revoked'] })
  status!: 'revoked';
  /** The first revocation's time (a repeated revoke answers the same). */
  @ApiProperty(TIME)
  revoked_at!: string;
}

export class RevokedResponse {
  data!: RevokedView;
}

export class ScopePreviewView {
  /** The exact tool name. */
  @ApiProperty({ minLength: 1, maxLength: 255 })
  tool_pattern!: string;
  /** null: only the reviewed values; `{}`: every argument unconstrained. */
  @ApiProperty(PATTERN_OR_NULL)
  params_pattern!: Record<string, string> | null;
  /** The scope in words. */
  preview!: string;
}

export class ScopePreviewResponse {
  data!: ScopePreviewView;
}

/** One approval in the sync state (docs/approvals.md). */
export class ApprovalSummaryView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty({ minLength: 1, maxLength: 255 })
  tool_name!: string;
  /** SHA-256 hex of the canonical JSON (RFC 8785) of the arguments. */
  @ApiProperty({ pattern: '^[0-9a-f]{64}$', minLength: 64, maxLength: 64 })
  arguments_hash!: string;
  /** The exact tool name. */
  @ApiProperty({ minLength: 1, maxLength: 255 })
  tool_pattern!: string;
  @ApiProperty(PATTERN_OR_NULL)
  params_pattern!: Record<string, string> | null;
  /** Revoked approvals leave the state. */
  @ApiProperty({ enum: ['pending', 'approved', 'denied'] })
  status!: 'pending' | 'approved' | 'denied';
  @ApiProperty(PERSISTENCE_OR_NULL)
  persistence!: ApprovalPersistence | null;
  consumed!: boolean;
  /** Set: a `session` approval, listed only for a matching `agent_session_id` query value. */
  @ApiProperty({ type: String, nullable: true, minLength: 1, maxLength: 255 })
  agent_session_id!: string | null;
  @ApiProperty(TIME_OR_NULL)
  approved_at!: string | null;
}

export class ApprovalPairView {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  principal!: string;
  @ApiProperty(UUID)
  agent_id!: string;
  approvals!: ApprovalSummaryView[];
}

export class ApprovalSyncView {
  pairs!: ApprovalPairView[];
}

export class ApprovalSyncResponse {
  data!: ApprovalSyncView;
}

const patternView = (pattern: ParamsPattern | null): Record<string, string> | null =>
  pattern === null ? null : { ...pattern };

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
  return {
    pairs: pairs.map((pair) => ({
      principal: pair.principal,
      agent_id: pair.agentId,
      approvals: pair.approvals.map(toSummaryView),
    })),
  };
}

export function toScopePreviewView(preview: ScopePreview): ScopePreviewView {
  return {
    tool_pattern: preview.toolPattern,
    params_pattern: patternView(preview.paramsPattern),
    preview: preview.preview,
  };
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
  return {
    id: record.id,
    status: 'approved',
    persistence: set(record.persistence, 'persistence'),
    approved_at: set(record.approvedAt, 'approved_at').toISOString(),
  };
}

export function toDeniedView(record: ApprovalRecord): DeniedView {
  return {
    id: record.id,
    status: 'denied',
    persistence: record.persistence === 'permanent' ? 'permanent' : 'once',
    denied_at: set(record.deniedAt, 'denied_at').toISOString(),
  };
}

export function toConsumedView(record: ApprovalRecord): ConsumedView {
  return { id: record.id, consumed: true, consumed_at: set(record.consumedAt, 'consumed_at').toISOString() };
}

export function toRevokedView(record: ApprovalRecord): RevokedView {
  return { id: record.id, status: 'revoked', revoked_at: set(record.revokedAt, 'revoked_at').toISOString() };
}
