import type { AdminGrantTarget, AdminGrantView } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/** A third-party service the grant delegates, and the scopes it delegates for it. */
export class AdminGrantServiceResponse {
  @ApiProperty({ format: 'uuid', example: '8d2e4f60-1b3a-4c5d-8e9f-0a1b2c3d4e5f' })
  service_id!: string;
  @ApiProperty({ example: 'Google Calendar' })
  service_display_name!: string;
  @ApiProperty({ example: ['calendar.read'] })
  scopes!: string[];
}

/** A protected resource (MCP server) the grant delegates, and the scopes it delegates for it. */
export class AdminGrantResourceResponse {
  @ApiProperty({ format: 'uuid', example: '5b7c9d1e-2f3a-4b5c-9d6e-7f8a9b0c1d2e' })
  resource_id!: string;
  @ApiProperty({ example: 'Files MCP server' })
  resource_display_name!: string;
  @ApiProperty({ example: ['files.read'] })
  scopes!: string[];
}

/** A permission set the person granted under. */
export class AdminGrantPermissionSetResponse {
  @ApiProperty({ format: 'uuid', example: 'c4d5e6f7-8a9b-4c0d-a1e2-f3a4b5c6d7e8' })
  permission_set_id!: string;
  @ApiProperty({ example: 'Read calendar' })
  name!: string;
}

/** A person's active grant to an agent, as administrators see it (never a token). */
export class AdminGrantResponse {
  @ApiProperty({ format: 'uuid', example: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0' })
  id!: string;
  /** The person who granted. */
  @ApiProperty({ example: 'alice@example.com' })
  principal!: string;
  @ApiProperty({ format: 'uuid', example: '3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55' })
  agent_id!: string;
  @ApiProperty({ example: 'Expense assistant' })
  agent_display_name!: string;
  @ApiProperty({ type: [AdminGrantServiceResponse] })
  services!: AdminGrantServiceResponse[];
  /** Protected resources (MCP servers) it delegates; empty when it delegates services only. */
  @ApiProperty({ type: [AdminGrantResourceResponse] })
  resources!: AdminGrantResourceResponse[];
  @ApiProperty({ type: [AdminGrantPermissionSetResponse] })
  permission_sets!: AdminGrantPermissionSetResponse[];
  /** When the person first granted (a replaced grant keeps it). */
  @ApiProperty({ format: 'date-time', example: '2026-11-02T14:05:00.000Z' })
  created_at!: string;
  /** When it stops being active; `null`: until revoked. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2027-01-31T00:00:00.000Z' })
  expires_at!: string | null;
}

export class AdminGrantListResponse {
  @ApiProperty({ type: [AdminGrantResponse] })
  items!: AdminGrantResponse[];
}

/** Answer of revoking every active grant of an agent. */
export class RevokedGrantsResponse {
  /** How many active grants were revoked. */
  @ApiProperty({ example: 42 })
  revoked!: number;
}

export function toAdminGrantResponse(grant: AdminGrantView): AdminGrantResponse {
  const targets = (list: readonly AdminGrantTarget[]) => list.map((t) => ({ ...t, scopes: [...t.scopes] }));
  return {
    id: grant.id,
    principal: grant.principal,
    agent_id: grant.agentId,
    agent_display_name: grant.agentDisplayName,
    services: targets(grant.services).map((t) => ({
      service_id: t.id,
      service_display_name: t.displayName,
      scopes: t.scopes,
    })),
    resources: targets(grant.resources).map((t) => ({
      resource_id: t.id,
      resource_display_name: t.displayName,
      scopes: t.scopes,
    })),
    permission_sets: grant.permissionSets.map((set) => ({ permission_set_id: set.id, name: set.name })),
    created_at: grant.createdAt.toISOString(),
    expires_at: grant.expiresAt?.toISOString() ?? null,
  };
}
