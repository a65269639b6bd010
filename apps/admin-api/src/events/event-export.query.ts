import { IsDateTime } from '@broker/http';
import { ApiProperty } from '@nestjs/swagger';
import { IsDefined } from 'class-validator';
import { EventFilterQuery } from './event-filter.query';

/** Query of `GET /api/events/export`: a time range, both ends required, and the list's filters. */
export class EventExportQuery extends EventFilterQuery {
  /** The range's start: events that happened at or after it (RFC 3339). */
  @ApiProperty({ format: 'date-time' })
  @IsDefined()
  @IsDateTime()
  from!: string;

  /** The range's end: events that happened before it (RFC 3339), after `from`. */
  @ApiProperty({ format: 'date-time' })
  @IsDefined()
  @IsDateTime()
  to!: string;
}
