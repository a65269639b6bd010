import type { PermissionSet, RequirementType } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class ServiceScopesResponse {
  @ApiProperty({ format: 'uuid' })
  service_id!: string;
  @ApiProperty()
  scopes!: string[];
  @ApiProperty()
  requirement_type!: RequirementType;
}

export class ResourceScopesResponse {
  @ApiProperty({ format: 'uuid' })
  resource_id!: string;
  @ApiProperty()
  scopes!: string[];
  @ApiProperty()
  requirement_type!: RequirementType;
}

export class PermissionSetResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty()
  name!: string;
  /** `""` when none was given. */
  @ApiProperty()
  description!: string;
  @ApiProperty()
  service_scopes!: ServiceScopesResponse[];
  @ApiProperty({ type: [ResourceScopesResponse] })
  resource_scopes!: ResourceScopesResponse[];
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

export class PermissionSetListResponse {
  @ApiProperty()
  items!: PermissionSetResponse[];
}

export function toPermissionSetResponse(set: PermissionSet): PermissionSetResponse {
  return {
    id: set.id,
    name: set.name,
    description: set.description,
    service_scopes: set.serviceScopes.map((entry) => ({
      service_id: entry.serviceId,
      scopes: [...entry.scopes],
      requirement_type: entry.requirementType,
    })),
    resource_scopes: set.resourceScopes.map((entry) => ({
      resource_id: entry.resourceId,
      scopes: [...entry.scopes],
      requirement_type: entry.requirementType,
    })),
    created_at: set.createdAt.toISOString(),
    updated_at: set.updatedAt.toISOString(),
  };
}
