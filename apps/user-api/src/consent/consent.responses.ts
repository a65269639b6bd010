import type { DelegationSummary, RequirementType } from '@broker/domain';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';

/** An agent the caller has an active grant for (docs/consent-and-connections.md). */
export class DelegationSummaryResponse {
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  display_name!: string;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
  /** Distinct services the active grant delegates. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  active_grant_count!: number;
  /** When the grant was last created or replaced. */
  @ApiProperty({ format: 'date-time' })
  last_modified_at!: string;
  /** The grant's `valid_until`; null: indefinite. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expires_at!: string | null;
  /** Sign-ins of the agent that can renew its access without the person (live refresh token families; never a token). */
  @ApiProperty({ type: 'integer', minimum: 0 })
  live_sessions!: number;
  /** The protected resources (MCP servers) the active grant lets the agent ask tokens for, by name. */
  resources!: DelegatedResourceView[];
}

/** A protected resource (an MCP server) a grant delegates, as lists name it. */
export class DelegatedResourceView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  display_name!: string;
  /** The RFC 8707 resource URI: the `aud` of its tokens. */
  @ApiProperty({ format: 'uri' })
  resource_uri!: string;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
}

export class DelegationListResponse {
  data!: DelegationSummaryResponse[];
}

export function toDelegationSummaryResponse(
  summary: DelegationSummary,
  liveSessions: number,
): DelegationSummaryResponse {
  return {
    agent_id: summary.agentId,
    display_name: summary.displayName,
    logo_url: summary.logoUrl,
    active_grant_count: summary.activeGrantCount,
    last_modified_at: summary.lastModifiedAt.toISOString(),
    expires_at: summary.expiresAt?.toISOString() ?? null,
    live_sessions: liveSessions,
    resources: summary.resources.map((resource) => ({
      id: resource.id,
      display_name: resource.displayName,
      resource_uri: resource.resourceUri,
      logo_url: resource.logoUrl,
    })),
  };
}

export class ConsentAgentView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  display_name!: string;
  description!: string | null;
  canonical_id!: string | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  governance_url!: string | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  user_documentation_url!: string | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  agent_interface_url!: string | null;
  /**
   * The broker's administrators suspended the agent: it can be revoked, not allowed, and it acts for nobody
   * until they resume it (docs/admin-api.md "Suspending an agent").
   */
  suspended!: boolean;
}

export class PermissionSetServiceView {
  @ApiProperty({ format: 'uuid' })
  service_id!: string;
  scopes!: string[];
}

export class PermissionSetResourceView {
  @ApiProperty({ format: 'uuid' })
  resource_id!: string;
  scopes!: string[];
}

export class ConsentPermissionSetView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  name!: string;
  /** Empty when the administrator gave none. */
  description!: string;
  /** As assigned to the agent. */
  requirement_type!: RequirementType;
  services!: PermissionSetServiceView[];
  /** The protected resources (MCP servers) of the set, with its scopes of each. */
  resources!: PermissionSetResourceView[];
}

export class PermissionView {
  scope!: string;
  /** The service's description of the scope, or the scope itself when it has none. */
  description!: string;
}

export class ConsentServiceView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  display_name!: string;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
  /** The strongest requirement among the agent's permission sets covering the service. */
  requirement_type!: RequirementType;
  /** Whether the caller has a third-party session with the service. */
  connection_status!: 'connected' | 'not_connected';
  /** Sorted, de-duplicated union of the scopes of the agent's permission sets covering the service. */
  permissions!: PermissionView[];
}

/**
 * A protected resource (an MCP server) the agent's permission sets reach: nothing to connect,
 * the broker issues its tokens itself.
 */
export class ConsentResourceView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  display_name!: string;
  description!: string | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
  /** The RFC 8707 resource URI: the `aud` of its tokens. */
  @ApiProperty({ format: 'uri' })
  resource_uri!: string;
  /** The strongest requirement among the agent's permission sets covering it. */
  requirement_type!: RequirementType;
  /** Sorted, de-duplicated union of the scopes of the agent's permission sets covering it, described. */
  permissions!: PermissionView[];
  /** The caller's active grant already delegates it. */
  granted!: boolean;
  /** The authorization request of the `session_token` asks a token for it. */
  requested!: boolean;
}

/** How the authorization session was answered (docs/security.md: a consent link is answered once). */
export class SessionAnswerView {
  /** Allow (`allowed`), Deny (`denied`), or an error sent to the client by redirect (`error`). */
  @ApiProperty({ enum: ['allowed', 'denied', 'error'] })
  decision!: 'allowed' | 'denied' | 'error';
  @ApiProperty({ format: 'date-time' })
  answered_at!: string;
}

export class AuthorizationContextView {
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  principal!: string;
  /** The authorization request to resume after consent. */
  @ApiProperty({ format: 'uri' })
  original_url!: string;
  /**
   * When the session token stops being accepted (its `exp`): the console keeps a pending request
   * for the tab until then (docs/security.md).
   */
  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
  /**
   * Seconds until then, by the broker's clock when it answered: the console counts down from
   * its own receipt of the answer, so a browser clock that is off does not end the request early
   * or late (the same reason RFC 8628 §3.2 gives `expires_in` rather than a time).
   */
  @ApiProperty({ type: 'integer', minimum: 0 })
  expires_in!: number;
  /**
   * RFC 8707: the resources (MCP servers, APIs) the agent asked a token for, as the request
   * named them; present only when it named at least one. The token's `aud` is these.
   */
  @ApiPropertyOptional({ type: String, format: 'uri', isArray: true, minItems: 1 })
  resources?: string[];
  /**
   * Present once the request was answered: the session cannot be answered again (Allow and
   * Deny give 409 `session_used`); absent while it is pending.
   */
  @ApiPropertyOptional({ type: SessionAnswerView })
  answered?: SessionAnswerView;
}

export class CimdView {
  @ApiProperty({ format: 'uri' })
  client_id_url!: string;
  @ApiProperty({ format: 'uri' })
  redirect_uri!: string;
  verified_domain!: string;
  requested_scopes!: string[];
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_uri!: string | null;
}

@ApiExtraModels(AuthorizationContextView, CimdView)
export class AgentDetail {
  agent!: ConsentAgentView;
  /** The agent's permission sets, in their order of assignment. */
  permission_sets!: ConsentPermissionSetView[];
  services!: ConsentServiceView[];
  /** The protected resources (MCP servers) the permission sets reach, in order of first appearance. */
  resources!: ConsentResourceView[];
  /** With a `session_token`: the pending authorization request; null otherwise. */
  @ApiProperty({ oneOf: [{ $ref: getSchemaPath(AuthorizationContextView) }, { type: 'null' }] })
  authorization_context!: AuthorizationContextView | null;
  /** With a `session_token` of a CIMD agent: the client metadata shown for consent; null otherwise. */
  @ApiProperty({ oneOf: [{ $ref: getSchemaPath(CimdView) }, { type: 'null' }] })
  cimd!: CimdView | null;
}

export class AgentDetailResponse {
  data!: AgentDetail;
}

export class DenialView {
  /** Where the front end sends the user: the client's redirect_uri with error=access_denied. */
  @ApiProperty({ format: 'uri' })
  redirect_url!: string;
}

export class DenialResponse {
  data!: DenialView;
}
