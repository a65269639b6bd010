import type { ProtectedResource } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class ResourceScopeResponse {
  @ApiProperty({ example: 'files.read' })
  scope!: string;
  @ApiProperty({ example: 'Read your files' })
  description!: string;
}

/** A protected resource as the admin API shows it. Absent values are `null`. */
export class ResourceResponse {
  @ApiProperty({ example: '5b7c9d1e-2f3a-4b5c-9d6e-7f8a9b0c1d2e', format: 'uuid' })
  id!: string;
  @ApiProperty({ example: 'Files MCP server' })
  display_name!: string;
  @ApiProperty({ example: 'Your documents, for agents working with files.', type: 'string', nullable: true })
  description!: string | null;
  @ApiProperty({ example: 'https://files.example.com/logo.png', type: 'string', format: 'uri', nullable: true })
  logo_url!: string | null;
  /** As registered: tokens for the resource carry it as `aud`. */
  @ApiProperty({ example: 'https://files.example.com/mcp', format: 'uri' })
  resource_uri!: string;
  @ApiProperty({ type: [ResourceScopeResponse] })
  scopes!: ResourceScopeResponse[];
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
  created_at!: string;
  @ApiProperty({ example: '2026-11-02T14:05:00.000Z', format: 'date-time' })
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
