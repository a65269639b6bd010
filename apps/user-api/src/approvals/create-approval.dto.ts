import type { RiskLevel } from '@broker/domain';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/**
 * Body of `POST /api/approvals` (docs/approvals.md), for the OpenAPI contract. It is
 * parsed by `parseCreateApprovalBody`, so `arguments` and `metadata` stay exactly as sent.
 */
export class CreateApprovalDto {
  /** Context shown to the reviewer; `agent_session_id` (optional string) scopes a `session` approval. */
  @ApiProperty({
    type: 'object',
    // Free-form: any other key is kept as sent.
    additionalProperties: true,
    properties: {
      agent_session_id: {
        type: 'string',
        nullable: true,
        minLength: 1,
        maxLength: 255,
        description: 'the agent session a `session` approval is limited to; no control characters',
      },
    },
  })
  metadata!: Record<string, unknown>;

  /** The intercepted tool, 1-255 characters, no control characters. */
  @ApiProperty({ minLength: 1, maxLength: 255 })
  tool_name!: string;

  /** The tool call's arguments, as the gateway intercepted them (at most 64 levels deep). */
  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;

  /** low, medium or critical; omit it rather than sending null (null is refused). */
  @ApiPropertyOptional({ enum: ['low', 'medium', 'critical'] })
  risk_level?: RiskLevel;
}
