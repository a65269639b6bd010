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
  /** What a backchannel authentication request (OpenID CIBA, docs/ciba.md) said; null for the gateways' requests. */
  readonly ciba: CibaFacts | null;
}

/** The request of a CIBA-born approval. */
export interface CibaFacts {
  /** `agent` (its own credentials) or `gateway:<sub>`: who asked, and who alone may poll. */
  readonly requester: string;
  readonly bindingMessage: string | null;
  /** The canonical JSON of the one `authorization_details` entry (RFC 9396), as the token carries it. */
  readonly authorizationDetailsJson: string;
  readonly scopes: readonly string[];
  /** When the `auth_req_id` expires. */
  readonly expiresAt: Date;
  /** The poll interval, grown by 5 s at each `slow_down`. */
  readonly intervalMs: number;
  readonly tokenIssuedAt: Date | null;
}

/** A new CIBA request: the approval row of one `auth_req_id`. */
export interface NewCibaApproval {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly toolName: string;
  readonly argumentsJson: string;
  readonly argumentsHash: string;
  readonly riskLevel: RiskLevel | null;
  /** SHA-256 of the `auth_req_id`. */
  readonly requestSha256: Buffer;
  readonly requester: string;
  readonly bindingMessage: string | null;
  readonly authorizationDetailsJson: string;
  readonly scopes: readonly string[];
  readonly intervalMs: number;
  readonly expiresAt: Date;
}

/** A remembered decision answered a CIBA request at once: which one, and how. */
export interface RememberedAnswer {
  readonly status: 'approved' | 'denied';
  readonly rememberedId: string;
}

/** What a CIBA request's create did. */
export type CibaCreateOutcome =
  | { readonly kind: 'created'; readonly record: ApprovalRecord; readonly remembered: RememberedAnswer | undefined }
  | { readonly kind: 'agent_unknown' }
  | { readonly kind: 'grant_required' }
  | { readonly kind: 'rate_limited'; readonly limit: 'pending' | 'per_window'; readonly retryAfterMs: number };

/** How a poll found its request (one conditional statement). */
export type CibaPollVerdict = 'invalid' | 'slow_down' | 'expired' | 'denied' | 'pending' | 'approved';

/** A poll's answer: the verdict, and the row's id and interval as the poll left them (empty when no row matched). */
export interface CibaPollResult {
  readonly verdict: CibaPollVerdict;
  readonly id: string | undefined;
  readonly intervalMs: number;
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
