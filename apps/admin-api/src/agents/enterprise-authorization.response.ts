import type { EnterpriseAuthorizationView } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/**
 * What a person's organisation allowed the agent through its identity provider (docs/oauth2.md
 * "Enterprise-managed authorization"): live until its last token expires or it is revoked.
 */
export class AgentEnterpriseAuthorizationResponse {
  /** The authorization's id: the `sid` of the tokens issued under it. */
  @ApiProperty({ format: 'uuid' })
  id!: string;
  /** The person (the principal the identity provider's assertion was mapped to). */
  principal!: string;
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  agent_display_name!: string;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  agent_logo_url!: string | null;
  /** The trusted issuer (the organisation's identity provider) that allowed it. */
  @ApiProperty({ format: 'uri' })
  issuer!: string;
  /** The MCP server (RFC 8707 resource) its tokens are for. */
  @ApiProperty({ format: 'uri' })
  resource_uri!: string;
  /** The registered protected resource's name; null when it is no longer registered. */
  @ApiProperty({ type: String, nullable: true })
  resource_display_name!: string | null;
  /** The scopes of its last token. */
  scopes!: string[];
  /** Its first token. */
  @ApiProperty({ format: 'date-time' })
  first_issued_at!: string;
  /** Its latest token. */
  @ApiProperty({ format: 'date-time' })
  last_issued_at!: string;
  /** When its latest token expires. */
  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
}

export class AgentEnterpriseAuthorizationListResponse {
  items!: AgentEnterpriseAuthorizationResponse[];
}

export function toAgentEnterpriseAuthorizationResponse(
  view: EnterpriseAuthorizationView,
): AgentEnterpriseAuthorizationResponse {
  return {
    id: view.id,
    principal: view.principal,
    agent_id: view.agentId,
    agent_display_name: view.agentDisplayName,
    agent_logo_url: view.agentLogoUrl,
    issuer: view.issuer,
    resource_uri: view.resourceUri,
    resource_display_name: view.resourceDisplayName,
    scopes: [...view.scopes],
    first_issued_at: view.firstIssuedAt.toISOString(),
    last_issued_at: view.lastIssuedAt.toISOString(),
    expires_at: view.expiresAt.toISOString(),
  };
}
