import {
  clientUriProblem,
  isRedirectUri,
  isResourceIndicatorEntry,
  MAX_AGENT_ALLOWED_RESOURCES,
  REQUIREMENT_TYPES,
  type RequirementType,
} from '@broker/domain';
import { IsPlainText, IsRedirectUri, IsResourceIndicatorEntry, IsScopeToken, MAX_LIST_ENTRIES } from '@broker/http';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  ValidateNested,
} from 'class-validator';
import { IsClientUri } from '../common/is-client-uri';
import { IsOmittable } from '../common/is-omittable';
import { IsOptionalLink, RegistryEntryDto } from '../common/registry-entry.dto';
import { IsUri } from '../common/is-uri';
import { TEXT_PATTERNS } from '../common/text-patterns';

export class AgentPermissionSetDto {
  @ApiProperty({ example: 'c4d5e6f7-8a9b-4c0d-a1e2-f3a4b5c6d7e8' })
  @IsUUID('all')
  permission_set_id!: string;

  /** Defaults to `mandatory` when omitted (`null` is refused). */
  @ApiPropertyOptional({ example: 'mandatory' })
  @IsOmittable()
  @IsIn(REQUIREMENT_TYPES)
  requirement_type?: RequirementType;
}

/** Body of `POST /api/agents` and `PUT /api/agents/{id}` (full replacement). */
export class AgentDto extends RegistryEntryDto {
  /** 1-128 of `[A-Za-z0-9._-]`, not UUID-shaped, unique. `null` or omitted: none. */
  @ApiPropertyOptional({
    example: 'expense-assistant',
    pattern: '^[A-Za-z0-9._-]{1,128}$',
    not: { type: 'string', format: 'uuid' },
  })
  @IsOptional()
  @IsString()
  @IsPlainText()
  canonical_id?: string | null;

  /** The agent's client id at the upstream authorization server (proxy mode). `null` or omitted: none. */
  @ApiPropertyOptional({ example: 'expense-assistant-prod', pattern: TEXT_PATTERNS.line })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  client_id?: string | null;

  /** https, or http on a loopback host. `null` or omitted: none. */
  @IsOptionalLink('https://expenses.example.com/governance')
  governance_url?: string | null;

  /** https, or http on a loopback host. `null` or omitted: none. */
  @IsOptionalLink('https://expenses.example.com/docs')
  user_documentation_url?: string | null;

  /** https, or http on a loopback host. `null` or omitted: none. */
  @IsOptionalLink('https://expenses.example.com/agent')
  agent_interface_url?: string | null;

  /**
   * https, http on a loopback host, or an RFC 8252 private-use scheme (`com.example.app:/cb`);
   * no fragment; never javascript:, data:, file:… Duplicates are stored once. Omitted: none.
   */
  @ApiPropertyOptional({
    example: ['https://expenses.example.com/oauth2/callback'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsRedirectUri({ each: true })
  @IsUri(isRedirectUri, { each: true })
  @IsPlainText({}, { each: true })
  redirect_uris?: string[];

  /** Empty or omitted: unrestricted. Duplicates are stored once. */
  @ApiPropertyOptional({
    example: ['calendar.read', 'mail.read'],
    type: 'array',
    items: { type: 'string', pattern: TEXT_PATTERNS.scope },
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsScopeToken({ each: true })
  allowed_scopes?: string[];

  /**
   * RFC 8707 resources (e.g. MCP servers) the agent may ask tokens for from the local authorization server, on top of
   * `oauth2_authorization_server.local.resource_indicators.allowed_resources`: exact URIs, or
   * prefixes ending in `/` (an http(s) origin and path), as in that list. Empty or omitted: no
   * per-agent restriction. Duplicates are stored once.
   */
  @ApiPropertyOptional({
    example: ['https://mcp.example.com/'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
    maxItems: MAX_AGENT_ALLOWED_RESOURCES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_AGENT_ALLOWED_RESOURCES)
  @IsResourceIndicatorEntry({ each: true })
  @IsUri(isResourceIndicatorEntry, { each: true })
  @IsPlainText({}, { each: true })
  allowed_resources?: string[];

  /**
   * Client ID Metadata Document URLs of this agent's clients: https, a fixed origin in normal
   * form (lower-case host, no default port) and a path; a path segment that is exactly `*`
   * stands for any one ordinary segment (never `.`, `..` or percent-encoded); no `*` in the
   * host or port, no `.`/`..` segments (also percent-encoded), user info or fragment.
   * Duplicates are stored once. Omitted: none.
   */
  @ApiPropertyOptional({
    example: ['https://expenses.example.com/oauth/client.json'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsClientUri({ each: true })
  @IsUri((value) => clientUriProblem(value) === undefined, { each: true })
  @IsPlainText({}, { each: true })
  client_uris?: string[];

  /**
   * RFC 9449 §5.2: `true`, the agent must present a DPoP proof (RFC 9449) on every token request;
   * `false`, a proof is optional; `null` or omitted, the server default
   * `oauth2_authorization_server.local.dpop.required`.
   */
  @ApiPropertyOptional({ example: true, type: 'boolean', nullable: true })
  @IsOptional()
  @IsBoolean()
  dpop_bound_access_tokens?: boolean | null;

  /** Existing permission sets, each at most once. Omitted: none. */
  @ApiPropertyOptional({
    example: [{ permission_set_id: 'c4d5e6f7-8a9b-4c0d-a1e2-f3a4b5c6d7e8', requirement_type: 'mandatory' }],
    type: [AgentPermissionSetDto],
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => AgentPermissionSetDto)
  permission_sets?: AgentPermissionSetDto[];
}
