import type { AgentSuspension } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

/** An agent's suspension (docs/admin-api.md "Suspending an agent"): when, by which administrator, and why. */
export class AgentSuspensionResponse {
  @ApiProperty({ format: 'date-time', example: '2026-11-29T10:15:00.000Z' })
  suspended_at!: string;
  /** The administrator's principal (the SSO proxy's header). */
  @ApiProperty({ example: 'alice@example.com' })
  suspended_by!: string;
  /** What the administrator wrote when suspending it; null when nothing. */
  @ApiProperty({ type: String, nullable: true, example: 'Credentials leaked in a public repository' })
  reason!: string | null;
}

export function toAgentSuspensionResponse(suspension: AgentSuspension): AgentSuspensionResponse {
  return {
    suspended_at: suspension.suspendedAt.toISOString(),
    suspended_by: suspension.suspendedBy,
    reason: suspension.reason,
  };
}
