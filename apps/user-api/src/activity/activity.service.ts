import { ApiError, parseRfc3339DateTime } from '@broker/domain';
import { EventRepository, type EventFilter } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { DEFAULT_ACTIVITY_LIMIT, type ActivityQuery } from './activity.query';
import { toActivityEvent, type ActivityListResponse } from './activity.response';

/** The query's time range as dates (the DTO has checked both are RFC 3339); `to` must come after `from`. */
function timeRange(query: ActivityQuery): Pick<EventFilter, 'from' | 'to'> {
  const from = query.from === undefined ? undefined : parseRfc3339DateTime(query.from);
  const to = query.to === undefined ? undefined : parseRfc3339DateTime(query.to);
  if (from !== undefined && to !== undefined && to.getTime() <= from.getTime()) {
    throw new ApiError('bad request', 'to must be after from', [{ field: 'to', problem: 'must be after from' }]);
  }
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/**
 * Issue 17 item 3: a person's own activity. The ledger is always filtered by the caller
 * (STYLE.md shape 2: the repository takes the owner), whatever the query says.
 */
@Injectable()
export class ActivityService {
  constructor(private readonly events: EventRepository) {}

  async page(principal: string, query: ActivityQuery): Promise<ActivityListResponse> {
    const filter: EventFilter = {
      ...(query.agent_id === undefined ? {} : { agentId: query.agent_id }),
      ...(query.service_id === undefined ? {} : { serviceId: query.service_id }),
      ...(query.type === undefined ? {} : { types: query.type }),
      ...timeRange(query),
      principal,
    };
    const page = await this.events.page(filter, query.limit ?? DEFAULT_ACTIVITY_LIMIT, query.cursor);
    return { data: page.events.map((event) => toActivityEvent(event, principal)), next_cursor: page.next };
  }
}
