import { hasDotSegment, isHttpsOrLoopbackUrl, parseAbsoluteUrl } from '@broker/domain';
import { IsHttpsOrLoopbackUrl, IsPlainText, IsScopeToken } from '@broker/http';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsNotIn,
  IsString,
  Length,
  MaxLength,
  ValidateBy,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';
import { IsUri } from '../common/is-uri';
import { RegistryEntryDto } from '../common/registry-entry.dto';
import { TEXT_PATTERNS } from '../common/text-patterns';

/** Most scopes one protected resource offers. */
export const MAX_RESOURCE_SCOPES = 100;
/** Longest resource URI, as the authorization endpoint takes a `resource` (RFC 8707). */
export const MAX_RESOURCE_URI_LENGTH = 2048;
/** The authorization server's own scopes (OAuth 2.1 refresh tokens, OpenID Connect): never a resource's. */
export const RESERVED_SCOPES = ['offline_access', 'openid'] as const;

/**
 * RFC 8707 §2: a resource indicator has no fragment; no user info either (a credential in a
 * token's `aud`), and no `.` or `..` segment (RFC 3986 §5.2.4: the URL used would differ from
 * the one compared). Checked for values the URL rule beside it accepts.
 */
function IsResourceIndicatorUri(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isResourceIndicatorUri',
      validator: {
        validate: (value) => {
          if (typeof value !== 'string' || !isHttpsOrLoopbackUrl(value)) return true;
          const url = parseAbsoluteUrl(value);
          return (
            url !== undefined &&
            !value.includes('#') &&
            url.username === '' &&
            url.password === '' &&
            !hasDotSegment(value)
          );
        },
        defaultMessage: () => '$property must have no fragment, no user info and no . or .. path segment (RFC 8707 §2)',
      },
    },
    options,
  );
}

export class ResourceScopeDto {
  /**
   * An OAuth scope token (RFC 6749 §3.3), at most once per resource; not `offline_access` or
   * `openid`, which are the authorization server's own.
   */
  @ApiProperty({ example: 'files.read', pattern: TEXT_PATTERNS.scope })
  @IsScopeToken()
  @IsNotIn(RESERVED_SCOPES, {
    message: "scope must not be offline_access or openid (the authorization server's own scopes)",
  })
  scope!: string;

  /** What the scope lets an agent do, in words: the consent page shows it. */
  @ApiProperty({ example: 'Read your files', pattern: TEXT_PATTERNS.lines, minLength: 1, maxLength: 1000 })
  @IsString()
  @Length(1, 1000)
  @IsPlainText({ lines: true })
  description!: string;
}

/** Body of `POST /api/resources` and `PUT /api/resources/{id}`. */
export class ResourceDto extends RegistryEntryDto {
  // The shared fields, with this body's own examples (the validation rules are inherited).
  @ApiProperty({ example: 'Files MCP server' })
  declare display_name: string;

  @ApiPropertyOptional({ example: 'Your documents, for agents working with files.' })
  declare description?: string | null;

  @ApiPropertyOptional({ example: 'https://files.example.com/logo.png' })
  declare logo_url?: string | null;

  /**
   * The resource's identifier (RFC 8707, RFC 9728 `resource`): an absolute `https:` URI
   * (`http:` only on a loopback host) without fragment, user info or dot segment, at most 2048
   * characters. Stored exactly as given: tokens for it carry it as `aud`, compared as written.
   * Unique, and never also a service's protected resource.
   */
  @ApiProperty({ example: 'https://files.example.com/mcp', format: 'uri', maxLength: MAX_RESOURCE_URI_LENGTH })
  @IsString()
  @MaxLength(MAX_RESOURCE_URI_LENGTH)
  @IsHttpsOrLoopbackUrl()
  @IsUri(isHttpsOrLoopbackUrl)
  @IsResourceIndicatorUri()
  resource_uri!: string;

  /** The scopes the resource offers, each described (may be empty). */
  @ApiProperty({
    example: [{ scope: 'files.read', description: 'Read your files' }],
    type: [ResourceScopeDto],
    maxItems: MAX_RESOURCE_SCOPES,
  })
  @IsArray()
  @ArrayMaxSize(MAX_RESOURCE_SCOPES)
  @ValidateNested({ each: true })
  @Type(() => ResourceScopeDto)
  scopes!: ResourceScopeDto[];
}
