import { EVENT_TYPES, parseRfc3339DateTime, type EventType } from '@broker/domain';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsIn, IsInt, IsOptional, IsUUID, Matches, Max, Min, ValidateBy } from 'class-validator';

/** Issue 17: a page holds 1-100 events, 50 unless `limit` says otherwise. */
export const DEFAULT_ACTIVITY_LIMIT = 50;

/** The cursor a page's `next_cursor` carries: opaque to clients, a ledger position here (at most 18 digits: inside PostgreSQL's bigint). */
const CURSOR = /^[1-9][0-9]{0,17}$/;

/** An RFC 3339 date-time with a time zone on a real calendar date (`2026-02-30` is refused, not read as 2 March). */
function IsDateTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isRfc3339DateTime',
    validator: {
      validate: (value) => typeof value === 'string' && parseRfc3339DateTime(value) !== undefined,
      defaultMessage: () => '$property must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z',
    },
  });
}

/** `?type=a&type=b` and `?type=a,b` alike, de-duplicated; anything that is not text is left for the validator to refuse. */
function eventTypeList({ value }: { value: unknown }): unknown[] {
  const values = (Array.isArray(value) ? (value as unknown[]) : [value]).flatMap((item) =>
    typeof item === 'string' ? item.split(',') : [item],
  );
  return [...new Set(values)];
}

/** A decimal `limit` as a number; anything else stays as sent, for `@IsInt` to refuse. */
function decimal({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value;
}

/** Query of `GET /api/activity` (issue 17 item 3): cursor pagination and filters, all optional. */
export class ActivityQuery {
  /** The previous page's `next_cursor`, as received (opaque). Omitted: the newest events. */
  @IsOptional()
  @Matches(CURSOR, { message: 'cursor must be a next_cursor value of a previous page' })
  cursor?: string;

  /** Events per page, 1-100 (default 50). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_ACTIVITY_LIMIT })
  @IsOptional()
  @Transform(decimal)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  /** Only this agent's events. */
  @IsOptional()
  @IsUUID('all')
  agent_id?: string;

  /** Only this service's events. */
  @IsOptional()
  @IsUUID('all')
  service_id?: string;

  /** Only these kinds: repeatable (`type=a&type=b`) or comma-separated (`type=a,b`), each one of the README's event kinds. */
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string' },
    description:
      'Only these kinds: repeatable (`type=a&type=b`) or comma-separated (`type=a,b`), each an event kind (`grant.created`, ...)',
  })
  @IsOptional()
  @Transform(eventTypeList)
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true, message: `each type must be one of ${EVENT_TYPES.join(', ')}` })
  type?: EventType[];

  /** Only events that happened at or after this time (RFC 3339). */
  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsDateTime()
  from?: string;

  /** Only events that happened before this time (RFC 3339), after `from`. */
  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsDateTime()
  to?: string;
}
