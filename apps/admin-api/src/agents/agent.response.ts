import type { Agent, RequirementType } from '@broker/domain';
import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { AgentSuspensionResponse, toAgentSuspensionResponse } from './agent-suspension.response';

export class AgentPermissionSetResponse {
  @ApiProperty({ example: 'c4d5e6f7-8a9b-4c0d-a1e2-f3a4b5c6d7e8', format: 'uuid' })
  permission_set_id!: string;
  @ApiProperty({ example: 'mandatory' })
  requirement_type!: RequirementType;
}

/** An agent as the admin API shows it (docs/admin-api.md); absent values are `null`. */
@ApiExtraModels(AgentSuspensionResponse)
export class AgentResponse {
  @ApiProperty({ example: '3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55', format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'Expense assistant' })
  display_name!: string;
  @ApiProperty({ example: 'Files expense reports from receipts in your mailbox.' })
  description!: string | null;
  @ApiProperty({ example: 'expense-assistant' })
  canonical_id!: string | null;
  /** The agent's client id at the upstream authorization server (proxy mode). */
  @ApiProperty({ example: 'expense-assistant-prod' })
  client_id!: string | null;
  @ApiProperty({ example: 'https://expenses.example.com/logo.png', format: 'uri' })
  logo_url!: string | null;
  @ApiProperty({ example: 'https://expenses.example.com/governance', format: 'uri' })
  governance_url!: string | null;
  @ApiProperty({ example: 'https://expenses.example.com/docs', format: 'uri' })
  user_documentation_url!: string | null;
  @ApiProperty({ example: 'https://expenses.example.com/agent', format: 'uri' })
  agent_interface_url!: string | null;
  @ApiProperty({
    example: ['https://expenses.example.com/oauth2/callback'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
  })
  redirect_uris!: string[];
  /** Empty: unrestricted. */
  @ApiProperty({ example: ['calendar.read', 'mail.read'] })
  allowed_scopes!: string[];
  /** RFC 8707 resources the agent may ask tokens for (exact URIs or prefixes ending in `/`). Empty: no per-agent restriction. */
  @ApiProperty({ example: ['https://mcp.example.com/'], type: 'array', items: { type: 'string', format: 'uri' } })
  allowed_resources!: string[];
  @ApiProperty({
    example: ['https://expenses.example.com/oauth/client.json'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
  })
  client_uris!: string[];
  /**
   * RFC 9449 §5.2: `true`, the agent must present a DPoP proof (RFC 9449) on every token request;
   * `false`, a proof is optional; `null`, the server default `oauth2_authorization_server.local.dpop.required`.
   */
  @ApiProperty({ example: true, type: 'boolean', nullable: true })
  dpop_bound_access_tokens!: boolean | null;
  @ApiProperty()
  permission_sets!: AgentPermissionSetResponse[];
  /**
   * Set while an administrator has suspended the agent (`PUT /api/agents/{agentId}/suspension`):
   * its tokens, exchanges and approvals are refused until it is resumed; `null` otherwise.
   * Read-only: a body sent back to PUT leaves it out (an unknown field is 400).
   */
  @ApiProperty({ oneOf: [{ $ref: getSchemaPath(AgentSuspensionResponse) }, { type: 'null' }] })
  suspension!: AgentSuspensionResponse | null;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  updated_at!: string;
}

export function toAgentResponse(agent: Agent): AgentResponse {
  return {
    id: agent.id,
    display_name: agent.displayName,
    description: agent.description,
    canonical_id: agent.canonicalId,
    client_id: agent.clientId,
    logo_url: agent.logoUrl,
    governance_url: agent.governanceUrl,
    user_documentation_url: agent.userDocumentationUrl,
    agent_interface_url: agent.agentInterfaceUrl,
    redirect_uris: [...agent.redirectUris],
    allowed_scopes: [...agent.allowedScopes],
    allowed_resources: [...agent.allowedResources],
    client_uris: [...agent.clientUris],
    dpop_bound_access_tokens: agent.dpopBoundAccessTokens,
    permission_sets: agent.permissionSets.map((ref) => ({
      permission_set_id: ref.permissionSetId,
      requirement_type: ref.requirementType,
    })),
    suspension: agent.suspension === null ? null : toAgentSuspensionResponse(agent.suspension),
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.updatedAt.toISOString(),
  };
}
