import { DEFAULT_EVENT_LIMIT, eventFilter } from '@broker/events';
import { EventRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { ActivityQuery } from './activity.query';
import { toActivityEvent, type ActivityListResponse } from './activity.response';

/**
 * A person's own activity. The ledger is always filtered by the caller (the repository takes
 * the owner), whatever the query says.
 */
@Injectable()
export class ActivityService {
  constructor(private readonly events: EventRepository) {}

  async page(principal: string, query: ActivityQuery): Promise<ActivityListResponse> {
    const filter = { ...eventFilter(query, 'bad request'), principal };
    const page = await this.events.page(filter, query.limit ?? DEFAULT_EVENT_LIMIT, query.cursor);
    return { data: page.events.map((event) => toActivityEvent(event, principal)), next_cursor: page.next };
  }
}
