import type { ProtectedResource } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class ResourceScopeResponse {
  @ApiProperty()
  scope!: string;
  @ApiProperty()
  description!: string;
}

/** A protected resource as the admin API shows it. Absent values are `null`. */
export class ResourceResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty()
  display_name!: string;
  @ApiProperty({ type: 'string', nullable: true })
  description!: string | null;
  @ApiProperty({ type: 'string', format: 'uri', nullable: true })
  logo_url!: string | null;
  /** As registered: tokens for the resource carry it as `aud`. */
  @ApiProperty({ format: 'uri' })
  resource_uri!: string;
  @ApiProperty({ type: [ResourceScopeResponse] })
  scopes!: ResourceScopeResponse[];
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

export class ResourceListResponse {
  @ApiProperty({ type: [ResourceResponse] })
  items!: ResourceResponse[];
}

export function toResourceResponse(resource: ProtectedResource): ResourceResponse {
  return {
    id: resource.id,
    display_name: resource.displayName,
    description: resource.description,
    logo_url: resource.logoUrl,
    resource_uri: resource.resourceUri,
    scopes: resource.scopes.map((s) => ({ scope: s.scope, description: s.description })),
    created_at: resource.createdAt.toISOString(),
    updated_at: resource.updatedAt.toISOString(),
  };
}
