import type { Grant } from '@broker/domain';

export class GrantView {
  id!: string;
  principal!: string;
  agent_id!: string;
  valid_until!: string | null;
  /** Permission-set id → the service ids delegated under it. */
  granted_permission_sets!: Record<string, string[]>;
  created_at!: string;
  updated_at!: string;
}

export class GrantListResponse {
  data!: GrantView[];
}

export class GrantResponse {
  data!: GrantView;
  /** With a session_token: the original authorization URL, to resume the flow. */
  redirect_url?: string;
}

export function toGrantView(grant: Grant): GrantView {
  const sets: Record<string, string[]> = {};
  for (const delegation of grant.delegations) (sets[delegation.permissionSetId] ??= []).push(delegation.serviceId);
  return {
    id: grant.id,
    principal: grant.principal,
    agent_id: grant.agentId,
    valid_until: grant.validUntil?.toISOString() ?? null,
    granted_permission_sets: sets,
    created_at: grant.createdAt.toISOString(),
    updated_at: grant.updatedAt.toISOString(),
  };
}
