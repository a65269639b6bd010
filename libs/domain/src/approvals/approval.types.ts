// Tool approvals: the records the approvals lib decides over and persistence stores (types only).
/** Stored status of a tool approval. `expired` (a pending request past its TTL) is never shown: it answers 410. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'revoked' | 'expired';

/** How long a decision holds (docs/approvals.md). */
export type ApprovalPersistence = 'once' | 'session' | 'permanent';

export type RiskLevel = 'low' | 'medium' | 'critical';

/** Argument name → glob (the stored `params_pattern`). */
export type ParamsPattern = Readonly<Record<string, string>>;

/** A stored tool approval. `arguments` and `metadata` come back exactly as the gateway sent them. */
export interface ApprovalRecord {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  /** Only on reads that join the agent (the UI's views); undefined elsewhere. */
  readonly agentDisplayName?: string;
  readonly toolName: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly argumentsHash: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly riskLevel: RiskLevel | null;
  readonly agentSessionId: string | null;
  readonly status: ApprovalStatus;
  readonly persistence: ApprovalPersistence | null;
  readonly paramsPattern: ParamsPattern | null;
  readonly consumed: boolean;
  /** Part of the gateways' sync state. */
  readonly listed: boolean;
  readonly createdAt: Date;
  /** Pending: when it expires. One-time denial: when it leaves the sync state. Else null. */
  readonly expiresAt: Date | null;
  readonly approvedAt: Date | null;
  readonly deniedAt: Date | null;
  readonly consumedAt: Date | null;
  readonly revokedAt: Date | null;
}

/** A new pending request. */
export interface NewApproval {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly toolName: string;
  /** The arguments' JSON text, stored verbatim. */
  readonly argumentsJson: string;
  readonly argumentsHash: string;
  readonly metadataJson: string;
  readonly riskLevel: RiskLevel | null;
  readonly agentSessionId: string | null;
  readonly expiresAt: Date;
}

/** Per (principal, agent) creation limits, checked under the pair's lock. */
export interface CreationLimits {
  readonly maxPending: number;
  readonly maxPerWindow: number;
  readonly windowMs: number;
}

/** What a create did. */
export type CreateOutcome =
  | { readonly kind: 'created'; readonly record: ApprovalRecord }
  | { readonly kind: 'duplicate'; readonly record: ApprovalRecord }
  | { readonly kind: 'agent_unknown' }
  | { readonly kind: 'grant_required' }
  | { readonly kind: 'rate_limited'; readonly limit: 'pending' | 'per_window'; readonly retryAfterMs: number };

/** One approval as the gateways' sync lists it. */
export interface SyncedApproval {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly toolName: string;
  readonly argumentsHash: string;
  readonly paramsPattern: ParamsPattern | null;
  readonly status: 'pending' | 'approved' | 'denied';
  readonly persistence: ApprovalPersistence | null;
  readonly consumed: boolean;
  readonly agentSessionId: string | null;
  readonly approvedAt: Date | null;
}

/** The sync state at one version, read in one statement (one snapshot). */
export interface SyncSnapshot {
  readonly version: number;
  /** Ordered by principal, agent, creation. */
  readonly approvals: readonly SyncedApproval[];
}

/** Which approvals a sync asks for. */
export interface SyncFilter {
  /** undefined: every principal. */
  readonly principal: string | undefined;
  /** Session-scoped approvals are listed only for these agent session ids. */
  readonly agentSessionIds: readonly string[];
}
