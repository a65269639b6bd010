import { DEFAULT_EVENT_LIMIT, eventFilter, type EventFilter, type RecordedEvent } from '@broker/events';
import { EventRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import type { EventExportQuery } from './event-export.query';
import type { EventListQuery } from './event-list.query';
import { toEventResponse, type EventListResponse } from './event.response';

/** Events per page of an export: a large range streams in pages of this many, never held whole in memory. */
export const EXPORT_PAGE_SIZE = 500;

/** The query's filters for the repository (the DTOs have checked every value; `to` must come after `from`). */
function toFilter(query: EventListQuery | EventExportQuery): EventFilter {
  return {
    ...(query.principal === undefined ? {} : { principal: query.principal }),
    ...eventFilter(query, 'invalid request'),
  };
}

/** The whole ledger for administrators, by page or as an export of a time range. */
@Injectable()
export class EventsService {
  constructor(private readonly events: EventRepository) {}

  async page(query: EventListQuery): Promise<EventListResponse> {
    const page = await this.events.page(toFilter(query), query.limit ?? DEFAULT_EVENT_LIMIT, query.cursor);
    return { items: page.events.map(toEventResponse), next_cursor: page.next };
  }

  /**
   * The range's events page by page, newest first, with the list's cursor: events recorded
   * while the export runs land above its first page and are not included. The filter is
   * checked before the first page is read, so a bad query is refused before any byte is sent.
   */
  export(query: EventExportQuery): AsyncGenerator<RecordedEvent[]> {
    return this.pages(toFilter(query));
  }

  private async *pages(filter: EventFilter): AsyncGenerator<RecordedEvent[]> {
    let cursor: string | undefined;
    do {
      const page = await this.events.page(filter, EXPORT_PAGE_SIZE, cursor);
      if (page.events.length > 0) yield page.events;
      cursor = page.next ?? undefined;
    } while (cursor !== undefined);
  }
}
