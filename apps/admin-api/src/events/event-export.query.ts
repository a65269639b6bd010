import { EventFilterQuery } from '@broker/api-shapes';
import { IsDateTime, IsPlainText } from '@broker/http';
import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsOptional, IsString, Length } from 'class-validator';

/** Query of `GET /api/events/export`: a time range, both ends required, and the list's filters. */
export class EventExportQuery extends EventFilterQuery {
  /** Only this person's events (the subject principal). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsPlainText()
  principal?: string;

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
