import { isHttpUrl, TOKEN_ENDPOINT_AUTH_METHODS, type TokenEndpointAuthMethod } from '@broker/domain';
import { IsHttpUrl, IsPlainText, IsScopeToken, MAX_LIST_ENTRIES } from '@broker/http';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length, ValidateNested } from 'class-validator';
import { IsOmittable } from '../common/is-omittable';
import { IsUri } from '../common/is-uri';
import { RegistryEntryDto } from '../common/registry-entry.dto';
import { TEXT_PATTERNS } from '../common/text-patterns';

export class ServiceScopeDto {
  /** An OAuth scope token (RFC 6749 §3.3), at most once per service. */
  @ApiProperty({ example: 'calendar.read', pattern: TEXT_PATTERNS.scope })
  @IsScopeToken()
  scope!: string;

  /** Human-readable, shown on the consent page. `null` or omitted: none (read back as `""`). */
  @ApiPropertyOptional({ example: 'Read your calendar', pattern: TEXT_PATTERNS.lines })
  @IsOptional()
  @IsString()
  @Length(0, 1000)
  @IsPlainText({ lines: true })
  description?: string | null;
}

/** Body of `POST /api/services` and `PUT /api/services/{id}`. */
export class ServiceDto extends RegistryEntryDto {
  // The shared fields, with this body's own examples (the validation rules are inherited).
  @ApiProperty({ example: 'Google Calendar' })
  declare display_name: string;

  @ApiPropertyOptional({ example: 'Your calendar, read by agents you allow.' })
  declare description?: string | null;

  @ApiPropertyOptional({ example: 'https://calendar.example.com/logo.png' })
  declare logo_url?: string | null;

  /** The broker's client id at the third party. */
  @ApiProperty({ example: 'broker-calendar-client', pattern: TEXT_PATTERNS.line })
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  client_id!: string;

  /**
   * Write-only; encrypted at rest. Required by `client_secret_basic` and `client_secret_post`,
   * refused with `none`. On create, `null` or omitted: none; on PUT, omitted keeps the stored
   * secret and `null` removes it.
   */
  @ApiPropertyOptional({
    example: 'REPLACE_WITH_THE_PROVIDER_CLIENT_SECRET',
    pattern: TEXT_PATTERNS.line,
    writeOnly: true,
  })
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  @IsPlainText()
  client_secret?: string | null;

  /** Omitted: `client_secret_basic` with a secret, `none` without (`null` is refused). */
  @ApiPropertyOptional({ example: 'client_secret_basic' })
  @IsOmittable()
  @IsIn(TOKEN_ENDPOINT_AUTH_METHODS)
  token_endpoint_auth_method?: TokenEndpointAuthMethod;

  /** Absolute http(s) URL; stored without trailing slash. Endpoints not given are discovered from it. */
  @ApiProperty({ example: 'https://calendar.example.com', format: 'uri' })
  @IsString()
  @IsHttpUrl()
  @IsUri(isHttpUrl)
  @IsPlainText()
  issuer_uri!: string;

  /** `null` or omitted: discovered from `issuer_uri` (RFC 8414, then OpenID Connect Discovery). */
  @ApiPropertyOptional({ example: 'https://calendar.example.com/oauth2/authorize', format: 'uri' })
  @IsOptional()
  @IsHttpUrl()
  @IsUri(isHttpUrl)
  @IsPlainText()
  authorization_endpoint?: string | null;

  /** `null` or omitted: discovered from `issuer_uri` (RFC 8414, then OpenID Connect Discovery). */
  @ApiPropertyOptional({ example: 'https://calendar.example.com/oauth2/token', format: 'uri' })
  @IsOptional()
  @IsHttpUrl()
  @IsUri(isHttpUrl)
  @IsPlainText()
  token_endpoint?: string | null;

  /** The scopes the consent page explains, each scope at most once. Omitted: none. */
  @ApiPropertyOptional({
    example: [{ scope: 'calendar.read', description: 'Read your calendar' }],
    type: [ServiceScopeDto],
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => ServiceScopeDto)
  scopes?: ServiceScopeDto[];

  /**
   * Absolute http(s) URIs without fragment or user info; stored normalised (scheme and host
   * lower-cased, no trailing slash), de-duplicated; each belongs to one service only. Omitted: none.
   */
  @ApiPropertyOptional({
    example: ['https://calendar.example.com/api'],
    type: 'array',
    items: { type: 'string', format: 'uri' },
    maxItems: MAX_LIST_ENTRIES,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_LIST_ENTRIES)
  @IsString({ each: true })
  @IsPlainText({}, { each: true })
  protected_resources?: string[];
}
