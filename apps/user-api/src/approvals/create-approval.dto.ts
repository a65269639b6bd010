import type { RiskLevel } from '@broker/persistence';
import { Transform } from 'class-transformer';
import { IsDefined, IsIn, IsObject, IsOptional, IsString, Length } from 'class-validator';

/** The parsed JSON value exactly as sent (not a copy rebuilt by the transformer). */
const AsSent = (): PropertyDecorator => Transform(({ obj, key }) => (obj as Record<string, unknown>)[key]);

/** Body of `POST /api/approvals` (API.md "Tool approvals"). */
export class CreateApprovalDto {
  /** Context shown to the reviewer; `agent_session_id` (optional string) scopes a `session` approval. */
  @IsDefined()
  @IsObject()
  @AsSent()
  metadata!: Record<string, unknown>;

  /** The intercepted tool (1-255 characters). */
  @IsDefined()
  @IsString()
  @Length(1, 255)
  tool_name!: string;

  /** The tool call's arguments, as the gateway intercepted them. */
  @IsDefined()
  @IsObject()
  @AsSent()
  arguments!: Record<string, unknown>;

  @IsOptional()
  @IsIn(['low', 'medium', 'critical'])
  risk_level?: RiskLevel;
}
