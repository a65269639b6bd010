import { IsPlainText } from '@broker/http';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Length } from 'class-validator';

/** The filters of `GET /api/grants`, combined with AND; none: every active grant. */
export class AdminGrantQuery {
  /** Only this person's grants (their principal). */
  @ApiPropertyOptional({ example: 'alice@example.com' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsPlainText()
  principal?: string;

  /** Only grants to this agent. */
  @ApiPropertyOptional({ format: 'uuid', example: '3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55' })
  @IsOptional()
  @IsUUID('all', { message: 'agent_id must be a UUID' })
  agent_id?: string;

  /** Only grants delegating this third-party service. */
  @ApiPropertyOptional({ format: 'uuid', example: '8d2e4f60-1b3a-4c5d-8e9f-0a1b2c3d4e5f' })
  @IsOptional()
  @IsUUID('all', { message: 'service_id must be a UUID' })
  service_id?: string;
}

/** A grant of an agent in the path. */
export class AgentGrantParams {
  /** The agent's id. */
  @IsUUID('all', { message: 'agent id must be a UUID' })
  agentId!: string;

  /** The grant's id. */
  @IsUUID('all', { message: 'grant id must be a UUID' })
  grantId!: string;
}
