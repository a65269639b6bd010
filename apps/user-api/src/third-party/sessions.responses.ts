import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';

export class ServiceScopeView {
  scope!: string;
  description!: string;
}

export class SessionServiceView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  display_name!: string;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
  scopes!: ServiceScopeView[];
}

export class SessionView {
  @ApiProperty({ format: 'uuid' })
  session_id!: string;
  /** When the user connected (or last reconnected) the service. */
  @ApiProperty({ format: 'date-time' })
  initiated_at!: string;
  /** null: the provider gave no expiry. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  access_token_expires_at!: string | null;
  /** null: no refresh token, or the provider gave no expiry. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  refresh_token_expires_at!: string | null;
  /** The access token has expired (a refresh may still renew it). */
  is_expired!: boolean;
  has_refresh_token!: boolean;
  /** The provider refused the refresh token: the user must reconnect. */
  needs_reauthentication!: boolean;
  /** The scopes the provider granted. */
  scope!: string[];
  /** Agents with an active grant of the caller that delegates this service. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  dependent_agent_count!: number;
  /** Tokens are stored sealed by the vault. */
  is_encrypted!: boolean;
}

@ApiExtraModels(SessionView)
export class SessionListItem {
  service!: SessionServiceView;
  /** null: the caller has not connected this service. */
  @ApiProperty({ oneOf: [{ $ref: getSchemaPath(SessionView) }, { type: 'null' }] })
  session!: SessionView | null;
}

export class SessionListResponse {
  /** One item per configured service. */
  data!: SessionListItem[];
}

export class AgentRef {
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  display_name!: string;
}

export class SessionDetail {
  service!: SessionServiceView;
  session!: SessionView;
  /** Agents with an active grant of the caller that delegates this service. */
  dependent_agents!: AgentRef[];
}

export class SessionDetailResponse {
  data!: SessionDetail;
}

export class TerminatedSession {
  @ApiProperty({ type: 'boolean', enum: [true] })
  terminated!: true;
  /** Agents that lose access to the service. */
  affected_agents!: AgentRef[];
}

export class TerminatedSessionResponse {
  data!: TerminatedSession;
}

export class AffectedAgents {
  /** Agents that would lose access to the service if the session ended. */
  affected_agents!: AgentRef[];
}

export class AffectedAgentsResponse {
  data!: AffectedAgents;
}

export class RefreshedSessionResponse {
  data!: SessionView;
}
