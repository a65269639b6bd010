import { REQUIREMENT_TYPES, type RequirementType } from '@broker/domain';
import { IsHttpsOrLoopbackUrl, IsHttpUrl, IsRedirectUri, IsScopeToken } from '@broker/http';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsOptional, IsString, IsUUID, Length, ValidateNested } from 'class-validator';

export class AgentPermissionSetDto {
  @IsUUID('all')
  permission_set_id!: string;

  /** Defaults to `mandatory`. */
  @IsOptional()
  @IsIn(REQUIREMENT_TYPES)
  requirement_type?: RequirementType;
}

/** Body of `POST /api/agents` and `PUT /api/agents/{id}` (full replacement). */
export class AgentDto {
  @IsString()
  @Length(1, 255)
  display_name!: string;

  @IsOptional()
  @IsString()
  @Length(0, 4000)
  description?: string | null;

  /** 1-128 of `[A-Za-z0-9._-]`, not UUID-shaped, unique. */
  @IsOptional()
  @IsString()
  canonical_id?: string | null;

  /** The agent's client id at the upstream authorization server (proxy mode). */
  @IsOptional()
  @IsString()
  @Length(1, 255)
  client_id?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  logo_url?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  governance_url?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  user_documentation_url?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  agent_interface_url?: string | null;

  /** https, http on loopback, or an RFC 8252 private-use scheme; never javascript:, data:, file:… */
  @IsOptional()
  @IsArray()
  @IsRedirectUri({ each: true })
  redirect_uris?: string[];

  /** Empty list: unrestricted. */
  @IsOptional()
  @IsArray()
  @IsScopeToken({ each: true })
  allowed_scopes?: string[];

  @IsOptional()
  @IsArray()
  @IsHttpUrl({ each: true })
  client_uris?: string[];

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AgentPermissionSetDto)
  permission_sets?: AgentPermissionSetDto[];
}
