import { IsPlainText } from '@broker/http';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import { TEXT_PATTERNS } from '../common/text-patterns';

/** `PUT /api/agents/{agentId}/suspension` (docs/admin-api.md "Suspending an agent"). */
export class SuspendAgentDto {
  /**
   * Why the agent is suspended, for the other administrators and the ledger (`agent.suspended`).
   * `null`, omitted or blank: none. Ignored when the agent is suspended already.
   */
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 500,
    pattern: TEXT_PATTERNS.lines,
    example: 'Credentials leaked in a public repository',
  })
  @IsOptional()
  @IsString()
  @Length(0, 500)
  @IsPlainText({ lines: true })
  reason?: string | null;
}
