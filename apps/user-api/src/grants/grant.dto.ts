import { ApiProperty } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsDefined, IsOptional, IsString } from 'class-validator';

const UUID: SchemaObject = { type: 'string', format: 'uuid' };

/** The delegations as an object (JSON Schema 2020-12 `propertyNames`, which Nest's types do not list). */
const DELEGATIONS: SchemaObject & { propertyNames: SchemaObject } = {
  type: 'object',
  propertyNames: UUID,
  additionalProperties: { type: 'array', items: UUID, minItems: 1 },
};

/** Body of `POST /api/consent/agents/{agent_id}/grants`. */
export class GrantDto {
  /**
   * Permission-set id → non-empty array of service ids; `{}` or `[]` deletes the grant.
   * Never null (400 `invalid request`).
   */
  @ApiProperty({
    oneOf: [DELEGATIONS, { type: 'array', maxItems: 0, description: 'deletes the grant, as `{}`' }],
  })
  @IsDefined()
  granted_permission_sets!: unknown;

  /** RFC 3339 with a time zone, in the future; null or omitted: indefinite. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, required: false })
  @IsOptional()
  @IsString()
  valid_until?: string | null;
}
