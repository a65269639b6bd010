import type { Grant } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

const UUID: SchemaObject = { type: 'string', format: 'uuid' };

/** Keys are permission-set ids (JSON Schema 2020-12 `propertyNames`, which Nest's types do not list). */
const UUID_KEYS = { propertyNames: UUID };

/** A user's delegation to an agent (docs/consent-and-connections.md). */
export class GrantView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  principal!: string;
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  /** null: indefinite. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  valid_until!: string | null;
  /** Permission-set id → the ids of the services and protected resources delegated under it. */
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: UUID, minItems: 1 }, ...UUID_KEYS })
  granted_permission_sets!: Record<string, string[]>;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

export class GrantListResponse {
  data!: GrantView[];
}

export class GrantResponse {
  data!: GrantView;
  /**
   * Only with a `session_token`: the original authorization URL, to resume the flow
   * (absent, not null, without one).
   */
  @ApiProperty({ format: 'uri', required: false })
  redirect_url?: string;
}

export function toGrantView(grant: Grant): GrantView {
  const sets: Record<string, string[]> = {};
  for (const delegation of grant.delegations) (sets[delegation.permissionSetId] ??= []).push(delegation.serviceId);
  for (const delegation of grant.resourceDelegations)
    (sets[delegation.permissionSetId] ??= []).push(delegation.resourceId);
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
