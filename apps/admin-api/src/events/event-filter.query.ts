import { EVENT_TYPES, parseRfc3339DateTime, type EventType } from '@broker/domain';
import { IsPlainText } from '@broker/http';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsIn, IsOptional, IsString, IsUUID, Length, ValidateBy } from 'class-validator';

/** An RFC 3339 date-time with a time zone on a real calendar date (`2026-02-30` is refused, not read as 2 March). */
export function IsDateTime(): PropertyDecorator {
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

/** The filters `GET /api/events` and its export share (issue 17 item 4); the time range is each one's own. */
export class EventFilterQuery {
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
  @IsIn(EVENT_TYPES, { each: true, message: `each type must be one of ${EVENT_TYPES.join(', ')}` })
  type?: EventType[];
}
