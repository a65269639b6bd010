import { REQUIREMENT_TYPES, type RequirementType } from '@broker/domain';
import { IsHttpsOrLoopbackUrl, IsHttpUrl, IsPlainText, IsRedirectUri, IsScopeToken, MAX_LIST_ENTRIES } from '@broker/http';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, IsUUID, Length, ValidateNested } from 'class-validator';

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
  @IsPlainText()
  display_name!: string;

  @IsOptional()
  @IsString()
  @Length(0, 4000)
  @IsPlainText({ lines: true })
  description?: string | null;

  /** 1-128 of `[A-Za-z0-9._-]`, not UUID-shaped, unique. */
  @IsOptional()
  @IsString()
  @IsPlainText()
  canonical_id?: string | null;

  /** The agent's client id at the upstream authorization server (proxy mode). */
  @IsOptional()
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  client_id?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  @IsPlainText()
  logo_url?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  @IsPlainText()
  governance_url?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  @IsPlainText()
  user_documentation_url?: string | null;

  @IsOptional()
  @IsHttpsOrLoopbackUrl()
  @IsPlainText()
  agent_interface_url?: string | null;

  /** https, http on loopback, or an RFC 8252 private-use scheme; never javascript:, data:, file:… */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsRedirectUri({ each: true })
  @IsPlainText({}, { each: true })
  redirect_uris?: string[];

  /** Empty list: unrestricted. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsScopeToken({ each: true })
  allowed_scopes?: string[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsHttpUrl({ each: true })
  @IsPlainText({}, { each: true })
  client_uris?: string[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => AgentPermissionSetDto)
  permission_sets?: AgentPermissionSetDto[];
}
