import type { Agent, RequirementType } from '@broker/domain';

export class AgentPermissionSetResponse {
  permission_set_id!: string;
  requirement_type!: RequirementType;
}

/** An agent as the admin API shows it (API.md "Admin server"). */
export class AgentResponse {
  id!: string;
  display_name!: string;
  description!: string | null;
  canonical_id!: string | null;
  client_id!: string | null;
  logo_url!: string | null;
  governance_url!: string | null;
  user_documentation_url!: string | null;
  agent_interface_url!: string | null;
  redirect_uris!: string[];
  allowed_scopes!: string[];
  client_uris!: string[];
  permission_sets!: AgentPermissionSetResponse[];
  created_at!: string;
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
    client_uris: [...agent.clientUris],
    permission_sets: agent.permissionSets.map((ref) => ({ permission_set_id: ref.permissionSetId, requirement_type: ref.requirementType })),
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.updatedAt.toISOString(),
  };
}
