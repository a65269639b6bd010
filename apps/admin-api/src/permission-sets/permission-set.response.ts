import type { PermissionSet, RequirementType } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class ServiceScopesResponse {
  @ApiProperty({ example: '8d2e4f60-1b3a-4c5d-8e9f-0a1b2c3d4e5f', format: 'uuid' })
  service_id!: string;
  @ApiProperty({ example: ['calendar.read'] })
  scopes!: string[];
  @ApiProperty({ example: 'mandatory' })
  requirement_type!: RequirementType;
}

export class ResourceScopesResponse {
  @ApiProperty({ example: '5b7c9d1e-2f3a-4b5c-9d6e-7f8a9b0c1d2e', format: 'uuid' })
  resource_id!: string;
  @ApiProperty({ example: ['files.read'] })
  scopes!: string[];
  @ApiProperty({ example: 'optional' })
  requirement_type!: RequirementType;
}

export class PermissionSetResponse {
  @ApiProperty({ example: 'c4d5e6f7-8a9b-4c0d-a1e2-f3a4b5c6d7e8', format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'Read calendar' })
  name!: string;
  /** `""` when none was given. */
  @ApiProperty({ example: 'Lets an agent read your calendar events.' })
  description!: string;
  @ApiProperty()
  service_scopes!: ServiceScopesResponse[];
  @ApiProperty({ type: [ResourceScopesResponse] })
  resource_scopes!: ResourceScopesResponse[];
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
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
