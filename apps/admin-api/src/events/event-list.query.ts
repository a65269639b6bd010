import { DEFAULT_EVENT_LIMIT, EVENT_CURSOR_MESSAGE, decimalLimit } from '@broker/events';
import { IsDateTime } from '@broker/http';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { EventFilterQuery } from './event-filter.query';

/** Query of `GET /api/events`: the filters, an optional time range and cursor pagination. */
export class EventListQuery extends EventFilterQuery {
  /** The previous page's `next_cursor`, as received (opaque). Omitted: the newest events. */
  @IsOptional()
  // `EVENT_CURSOR` written out: the OpenAPI document shows a literal's pattern.
  @Matches(/^[1-9][0-9]{0,17}$/, { message: EVENT_CURSOR_MESSAGE })
  cursor?: string;

  /** Events per page, 1-100 (default 50). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_EVENT_LIMIT })
  @IsOptional()
  @Transform(decimalLimit)
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
