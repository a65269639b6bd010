import { LedgerEventResponse, toLedgerEventResponse } from '@broker/api-shapes';
import type { RecordedEvent } from '@broker/events';
import { ApiProperty } from '@nestjs/swagger';

/** One ledger event as admins read it: a list item of `GET /api/events` and one line of its export. */
export class EventResponse extends LedgerEventResponse {
  /** The person whose delegation or data it concerns; null for the registry's admin writes. */
  @ApiProperty({ type: String, nullable: true })
  principal!: string | null;
}

/** Answer of `GET /api/events`: a page, newest first, as `{items}` like the admin server's other lists. */
export class EventListResponse {
  @ApiProperty()
  items!: EventResponse[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}

export function toEventResponse(event: RecordedEvent): EventResponse {
  return { ...toLedgerEventResponse(event), principal: event.principal };
}
