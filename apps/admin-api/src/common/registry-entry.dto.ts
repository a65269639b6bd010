import { isHttpsOrLoopbackUrl } from '@broker/domain';
import { IsHttpsOrLoopbackUrl, IsPlainText } from '@broker/http';
import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import { IsUri } from './is-uri';
import { TEXT_PATTERNS } from './text-patterns';

/**
 * An optional link: https, or http on a loopback host; `null` or omitted: none. The rules are
 * listed in the order stacked decorators would register them (the last one first), so a refused
 * value's messages come in the same order as where they were written out.
 */
export function IsOptionalLink(): PropertyDecorator {
  return applyDecorators(
    IsPlainText(),
    IsUri(isHttpsOrLoopbackUrl),
    IsHttpsOrLoopbackUrl(),
    IsOptional(),
    ApiPropertyOptional({ format: 'uri' }),
  );
}

/** What the registry shows every agent, service and protected resource with (a body's first fields). */
export class RegistryEntryDto {
  @ApiProperty({ pattern: TEXT_PATTERNS.line, minLength: 1, maxLength: 255 })
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  display_name!: string;

  /** `null` or omitted: none. */
  @ApiPropertyOptional({ pattern: TEXT_PATTERNS.lines })
  @IsOptional()
  @IsString()
  @Length(0, 4000)
  @IsPlainText({ lines: true })
  description?: string | null;

  /** https, or http on a loopback host. `null` or omitted: none. */
  @IsOptionalLink()
  logo_url?: string | null;
}
