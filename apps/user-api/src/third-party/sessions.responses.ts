export class ServiceScopeView {
  scope!: string;
  description!: string;
}

export class SessionServiceView {
  id!: string;
  display_name!: string;
  logo_url!: string | null;
  scopes!: ServiceScopeView[];
}

export class SessionView {
  session_id!: string;
  initiated_at!: string;
  access_token_expires_at!: string | null;
  refresh_token_expires_at!: string | null;
  /** The access token has expired (a refresh may still renew it). */
  is_expired!: boolean;
  has_refresh_token!: boolean;
  /** The provider refused the refresh token: the user must reconnect. */
  needs_reauthentication!: boolean;
  scope!: string[];
  /** Agents with an active grant of the caller that delegates this service. */
  dependent_agent_count!: number;
  /** Tokens are stored sealed by the vault. */
  is_encrypted!: boolean;
}

export class SessionListItem {
  service!: SessionServiceView;
  session!: SessionView | null;
}

export class SessionListResponse {
  data!: SessionListItem[];
}

export class AgentRef {
  agent_id!: string;
  display_name!: string;
}

export class SessionDetail {
  service!: SessionServiceView;
  session!: SessionView;
  dependent_agents!: AgentRef[];
}

export class SessionDetailResponse {
  data!: SessionDetail;
}

export class TerminatedSession {
  terminated!: true;
  affected_agents!: AgentRef[];
}

export class TerminatedSessionResponse {
  data!: TerminatedSession;
}

export class AffectedAgents {
  affected_agents!: AgentRef[];
}

export class AffectedAgentsResponse {
  data!: AffectedAgents;
}

export class RefreshedSessionResponse {
  data!: SessionView;
}
