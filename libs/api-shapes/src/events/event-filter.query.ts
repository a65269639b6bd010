import {
  DEFAULT_EVENT_LIMIT,
  EVENT_CURSOR_MESSAGE,
  EVENT_TYPE_MESSAGE,
  EVENT_TYPES,
  decimalLimit,
  eventTypeList,
  type EventQuery,
  type EventType,
} from '@broker/events';
import { IsDateTime } from '@broker/http';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsIn, IsInt, IsOptional, IsUUID, Matches, Max, Min } from 'class-validator';

/**
 * The filters every ledger read takes: the ledger's one read-side query (`EventQuery` of
 * @broker/events). Who the events are about is each read side's own: the caller on
 * `GET /api/activity`, any person (`principal`) on the admin server's `GET /api/events`.
 */
export class EventFilterQuery implements EventQuery {
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
  @IsIn(EVENT_TYPES, { each: true, message: EVENT_TYPE_MESSAGE })
  type?: EventType[];
}

/** A page of the ledger, newest first: the filters, an optional time range and cursor pagination. */
export class EventPageQuery extends EventFilterQuery {
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
