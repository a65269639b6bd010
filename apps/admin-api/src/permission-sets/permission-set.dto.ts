import { REQUIREMENT_TYPES, type RequirementType } from '@broker/domain';
import { IsPlainText, IsScopeToken, MAX_LIST_ENTRIES } from '@broker/http';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  ValidateNested,
} from 'class-validator';
import { IsOmittable } from '../common/is-omittable';
import { TEXT_PATTERNS } from '../common/text-patterns';

export class ServiceScopesDto {
  /** An existing service, at most once per permission set. */
  @ApiProperty({ example: '8d2e4f60-1b3a-4c5d-8e9f-0a1b2c3d4e5f' })
  @IsUUID('all')
  service_id!: string;

  /** OAuth scope tokens (RFC 6749 §3.3); duplicates are stored once. */
  @ApiProperty({
    example: ['calendar.read'],
    type: 'array',
    items: { type: 'string', pattern: TEXT_PATTERNS.scope },
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsScopeToken({ each: true })
  scopes!: string[];

  /** Omitted: `mandatory` (`null` is refused). */
  @ApiPropertyOptional({ example: 'mandatory' })
  @IsOmittable()
  @IsIn(REQUIREMENT_TYPES)
  requirement_type?: RequirementType;
}

export class ResourceScopesDto {
  /** An existing protected resource, at most once per permission set. */
  @ApiProperty({ example: '5b7c9d1e-2f3a-4b5c-9d6e-7f8a9b0c1d2e', format: 'uuid' })
  @IsUUID('all')
  resource_id!: string;

  /** Scopes the resource offers, at least one; duplicates are stored once. */
  @ApiProperty({
    example: ['files.read'],
    type: 'array',
    items: { type: 'string', pattern: TEXT_PATTERNS.scope },
    minItems: 1,
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsScopeToken({ each: true })
  scopes!: string[];

  /** Omitted: `mandatory` (`null` is refused). */
  @ApiPropertyOptional({ example: 'optional' })
  @IsOmittable()
  @IsIn(REQUIREMENT_TYPES)
  requirement_type?: RequirementType;
}

/**
 * Body of `POST /api/permission-sets` and `PUT /api/permission-sets/{id}`. At least one of
 * `service_scopes` and `resource_scopes` is non-empty.
 */
export class PermissionSetDto {
  /** Unique among permission sets. */
  @ApiProperty({ example: 'Read calendar', pattern: TEXT_PATTERNS.line })
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  name!: string;

  /** `null` or omitted: none (read back as `""`). */
  @ApiPropertyOptional({ example: 'Lets an agent read your calendar events.', pattern: TEXT_PATTERNS.lines })
  @IsOptional()
  @IsString()
  @Length(0, 4000)
  @IsPlainText({ lines: true })
  description?: string | null;

  /** Third-party services' scopes. Omitted: none. */
  @ApiPropertyOptional({
    example: [
      { service_id: '8d2e4f60-1b3a-4c5d-8e9f-0a1b2c3d4e5f', scopes: ['calendar.read'], requirement_type: 'mandatory' },
    ],
    type: [ServiceScopesDto],
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => ServiceScopesDto)
  service_scopes?: ServiceScopesDto[];

  /** Protected resources' scopes (MCP servers the broker issues tokens for). Omitted: none. */
  @ApiPropertyOptional({
    example: [
      { resource_id: '5b7c9d1e-2f3a-4b5c-9d6e-7f8a9b0c1d2e', scopes: ['files.read'], requirement_type: 'optional' },
    ],
    type: [ResourceScopesDto],
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => ResourceScopesDto)
  resource_scopes?: ResourceScopesDto[];
}

export class PermissionSetQuery {
  /** Only the sets covering this service. */
  @IsOptional()
  @IsUUID('all')
  service_id?: string;

  /** Only the sets covering this protected resource (both filters given: the sets covering both). */
  @IsOptional()
  @IsUUID('all')
  resource_id?: string;
}
