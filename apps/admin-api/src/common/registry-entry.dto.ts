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
 * value's messages come in the same order as where they were written out. `example`: a realistic
 * value for the API reference's "Try it out".
 */
export function IsOptionalLink(example: string): PropertyDecorator {
  return applyDecorators(
    IsPlainText(),
    IsUri(isHttpsOrLoopbackUrl),
    IsHttpsOrLoopbackUrl(),
    IsOptional(),
    ApiPropertyOptional({ format: 'uri', example }),
  );
}

/**
 * What the registry shows every agent, service and protected resource with (a body's first fields).
 * The examples are an agent's; `ServiceDto` and `ResourceDto` name their own.
 */
export class RegistryEntryDto {
  @ApiProperty({ example: 'Expense assistant', pattern: TEXT_PATTERNS.line, minLength: 1, maxLength: 255 })
  @IsString()
  @Length(1, 255)
  @IsPlainText()
  display_name!: string;

  /** `null` or omitted: none. */
  @ApiPropertyOptional({
    example: 'Files expense reports from receipts in your mailbox.',
    pattern: TEXT_PATTERNS.lines,
  })
  @IsOptional()
  @IsString()
  @Length(0, 4000)
  @IsPlainText({ lines: true })
  description?: string | null;

  /** https, or http on a loopback host. `null` or omitted: none. */
  @IsOptionalLink('https://expenses.example.com/logo.png')
  logo_url?: string | null;
}
