import type { PermissionSet, RequirementType } from '@broker/domain';

export class ServiceScopesResponse {
  service_id!: string;
  scopes!: string[];
  requirement_type!: RequirementType;
}

export class PermissionSetResponse {
  id!: string;
  name!: string;
  description!: string;
  service_scopes!: ServiceScopesResponse[];
  created_at!: string;
  updated_at!: string;
}

export class PermissionSetListResponse {
  items!: PermissionSetResponse[];
}

export function toPermissionSetResponse(set: PermissionSet): PermissionSetResponse {
  return {
    id: set.id,
    name: set.name,
    description: set.description,
    service_scopes: set.serviceScopes.map((entry) => ({ service_id: entry.serviceId, scopes: [...entry.scopes], requirement_type: entry.requirementType })),
    created_at: set.createdAt.toISOString(),
    updated_at: set.updatedAt.toISOString(),
  };
}
