import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { EventFilterQuery, IsDateTime } from './event-filter.query';

/** Issue 17: a page holds 1-100 events, 50 unless `limit` says otherwise (as `GET /api/activity`). */
export const DEFAULT_EVENT_LIMIT = 50;

/** A decimal `limit` as a number; anything else stays as sent, for `@IsInt` to refuse. */
function decimal({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value;
}

/** Query of `GET /api/events`: the filters, an optional time range and cursor pagination. */
export class EventListQuery extends EventFilterQuery {
  /** The previous page's `next_cursor`, as received (opaque). Omitted: the newest events. */
  @IsOptional()
  @Matches(/^[1-9][0-9]{0,17}$/, { message: 'cursor must be a next_cursor value of a previous page' })
  cursor?: string;

  /** Events per page, 1-100 (default 50). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_EVENT_LIMIT })
  @IsOptional()
  @Transform(decimal)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

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
