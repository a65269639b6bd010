import { LedgerEventResponse, toLedgerEventResponse } from '@broker/api-shapes';
import type { RecordedEvent } from '@broker/events';
import { ApiProperty } from '@nestjs/swagger';

/** One event of the caller's activity; the subject is the caller, so it is not repeated. */
export class ActivityEvent extends LedgerEventResponse {}

/** Answer of `GET /api/activity`: a page, newest first. */
export class ActivityListResponse {
  data!: ActivityEvent[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}

/**
 * The event as its subject sees it. The activity API never names another
 * person: an actor that is an administrator or another principal is shown by its type alone.
 */
export function toActivityEvent(event: RecordedEvent, caller: string): ActivityEvent {
  const { actor } = event;
  const named =
    actor.type === 'agent' || actor.type === 'gateway' || (actor.type === 'principal' && actor.id === caller);
  return toLedgerEventResponse(event, named ? actor.id : null);
}
