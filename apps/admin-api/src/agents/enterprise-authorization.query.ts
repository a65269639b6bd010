import { IsPlainText } from '@broker/http';
import { IsOptional, IsString, IsUUID, Length } from 'class-validator';

/** The filter of `GET /api/agents/{agentId}/enterprise-authorizations`. */
export class EnterpriseAuthorizationQuery {
  /** Only this person's authorizations (their principal). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsPlainText()
  principal?: string;
}

/** An agent's enterprise authorization in the path. */
export class EnterpriseAuthorizationParams {
  /** The agent's id. */
  @IsUUID('all', { message: 'agent id must be a UUID' })
  agentId!: string;

  /** The enterprise authorization's id (the `sid` of its tokens). */
  @IsUUID('all', { message: 'authorization id must be a UUID' })
  authorizationId!: string;
}
