import { REQUIREMENT_TYPES, type RequirementType } from '@broker/domain';
import { IsPlainText, IsScopeToken, MAX_LIST_ENTRIES } from '@broker/http';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, IsUUID, Length, ValidateNested } from 'class-validator';

export class ServiceScopesDto {
  @IsUUID('all')
  service_id!: string;

  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsScopeToken({ each: true })
  scopes!: string[];

  /** mandatory (default), optional or require_all_scopes. */
  @IsOptional()
  @IsIn(REQUIREMENT_TYPES)
  requirement_type?: RequirementType;
}

/** Body of `POST /api/permission-sets` and `PUT /api/permission-sets/{id}`. */
export class PermissionSetDto {
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  name!: string;

  @IsOptional()
  @IsString()
  @Length(0, 4000)
  @IsPlainText({ lines: true })
  description?: string;

  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => ServiceScopesDto)
  service_scopes!: ServiceScopesDto[];
}

export class PermissionSetQuery {
  /** Only the sets covering this service. */
  @IsOptional()
  @IsUUID('all')
  service_id?: string;
}
