import { EVENT_TYPE_MESSAGE, EVENT_TYPES, eventTypeList, type EventQuery, type EventType } from '@broker/events';
import { IsPlainText } from '@broker/http';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsIn, IsOptional, IsString, IsUUID, Length } from 'class-validator';

/**
 * The filters `GET /api/events` and its export share; the time range is each one's own. The
 * ledger's one read-side query (`EventQuery` of @broker/events, as `GET /api/activity` takes
 * it), plus `principal`: administrators read anyone's events.
 */
export class EventFilterQuery implements EventQuery {
  /** Only this person's events (the subject principal). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsPlainText()
  principal?: string;

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
