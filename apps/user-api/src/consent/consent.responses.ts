import type { DelegationSummary, RequirementType } from '@broker/domain';

export class DelegationSummaryResponse {
  agent_id!: string;
  display_name!: string;
  logo_url!: string | null;
  /** Distinct services the active grant delegates. */
  active_grant_count!: number;
  last_modified_at!: string;
  expires_at!: string | null;
}

export class DelegationListResponse {
  data!: DelegationSummaryResponse[];
}

export function toDelegationSummaryResponse(summary: DelegationSummary): DelegationSummaryResponse {
  return {
    agent_id: summary.agentId,
    display_name: summary.displayName,
    logo_url: summary.logoUrl,
    active_grant_count: summary.activeGrantCount,
    last_modified_at: summary.lastModifiedAt.toISOString(),
    expires_at: summary.expiresAt?.toISOString() ?? null,
  };
}

export class ConsentAgentView {
  id!: string;
  display_name!: string;
  description!: string | null;
  canonical_id!: string | null;
  logo_url!: string | null;
  governance_url!: string | null;
  user_documentation_url!: string | null;
  agent_interface_url!: string | null;
}

export class PermissionSetServiceView {
  service_id!: string;
  scopes!: string[];
}

export class ConsentPermissionSetView {
  id!: string;
  name!: string;
  description!: string;
  requirement_type!: RequirementType;
  services!: PermissionSetServiceView[];
}

export class PermissionView {
  scope!: string;
  description!: string;
}

export class ConsentServiceView {
  id!: string;
  display_name!: string;
  logo_url!: string | null;
  requirement_type!: RequirementType;
  connection_status!: 'connected' | 'not_connected';
  permissions!: PermissionView[];
}

export class AuthorizationContextView {
  agent_id!: string;
  principal!: string;
  original_url!: string;
}

export class CimdView {
  client_id_url!: string;
  redirect_uri!: string;
  verified_domain!: string;
  requested_scopes!: string[];
  logo_uri!: string | null;
}

export class AgentDetail {
  agent!: ConsentAgentView;
  permission_sets!: ConsentPermissionSetView[];
  services!: ConsentServiceView[];
  authorization_context!: AuthorizationContextView | null;
  cimd!: CimdView | null;
}

export class AgentDetailResponse {
  data!: AgentDetail;
}

export class DenialView {
  /** Where the front end sends the user: the client's redirect_uri with error=access_denied. */
  redirect_url!: string;
}

export class DenialResponse {
  data!: DenialView;
}
