import type { RiskLevel } from '@broker/domain';

/**
 * Body of `POST /api/approvals` (API.md "Tool approvals"), for the OpenAPI contract. It is
 * parsed by `parseCreateApprovalBody`, so `arguments` and `metadata` stay exactly as sent.
 */
export class CreateApprovalDto {
  /** Context shown to the reviewer; `agent_session_id` (optional string) scopes a `session` approval. */
  metadata!: Record<string, unknown>;

  /** The intercepted tool, 1-255 characters. */
  tool_name!: string;

  /** The tool call's arguments, as the gateway intercepted them (at most 64 levels deep). */
  arguments!: Record<string, unknown>;

  /** low, medium or critical. */
  risk_level?: RiskLevel;
}
