import type { EnterpriseAuthorizationView } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/**
 * What a person's organisation allowed an agent through its identity provider (docs/oauth2.md
 * "Enterprise-managed authorization"): live until its last token expires or it is revoked. The
 * fields both servers show; the admin server adds the person, the end-user server the scopes in words.
 */
export abstract class EnterpriseAuthorizationFields {
  /** The authorization's id: the `sid` of the tokens issued under it. */
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  agent_display_name!: string;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  agent_logo_url!: string | null;
  /** The organisation's identity provider that allowed it (the trusted issuer of its assertions). */
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
  /**
   * When its latest token expires: it is no longer listed after that unless a new token extends it. It is the
   * current token's end, not the end of what the organisation allowed: the identity provider can issue another.
   */
  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
}

export function toEnterpriseAuthorizationFields(view: EnterpriseAuthorizationView): EnterpriseAuthorizationFields {
  return {
    id: view.id,
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
