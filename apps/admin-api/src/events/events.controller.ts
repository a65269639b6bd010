import { ApiErrors } from '@broker/http';
import { Controller, Get, Logger, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { EventExportQuery } from './event-export.query';
import { EventListQuery } from './event-list.query';
import { EventListResponse } from './event.response';
import { EventsService } from './events.service';
import { NDJSON, writeNdjsonExport } from './ndjson-export';

/** The filename the export is saved under: the range, with characters file systems refuse removed. */
function exportFilename(query: EventExportQuery): string {
  const stamp = (value: string): string => value.replace(/[^0-9A-Za-z+-]/g, '');
  return `events-${stamp(query.from)}-${stamp(query.to)}.ndjson`;
}

@ApiTags('events')
@ApiSecurity('PrincipalHeader')
@Controller('api/events')
export class EventsController {
  private readonly logger = new Logger(EventsController.name);

  constructor(private readonly events: EventsService) {}

  /**
   * The activity ledger, newest first, as `{items, next_cursor}`. Filters by principal, agent,
   * service, kind and time range; cursor pagination (`cursor` = the previous page's
   * `next_cursor`); 400 `invalid request` for a bad filter or cursor.
   */
  @Get()
  @ApiOkResponse({ type: EventListResponse })
  @ApiErrors('invalid request')
  list(@Query() query: EventListQuery): Promise<EventListResponse> {
    return this.events.page(query);
  }

  /**
   * Every event of a time range as NDJSON, for SIEM import. `from` and `to` are required;
   * the list's filters apply. One event per line, newest first, in the shape of `GET /api/events`'s
   * items (`EventResponse`), streamed page by page as a download (`Content-Disposition: attachment`).
   */
  @Get('export')
  @ApiProduces(NDJSON)
  @ApiOkResponse({
    description:
      'One `EventResponse` JSON object per line (newline-delimited JSON), newest first; an empty body when the range has none',
    content: {
      [NDJSON]: {
        schema: {
          type: 'string',
          description: 'newline-delimited JSON: each line one #/components/schemas/EventResponse',
        },
      },
    },
    headers: {
      'Content-Disposition': {
        description: '`attachment; filename="events-<from>-<to>.ndjson"`',
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrors('invalid request')
  async export(@Query() query: EventExportQuery, @Res() response: Response): Promise<void> {
    await writeNdjsonExport(response, this.events.export(query), exportFilename(query), this.logger);
  }
}
