import type { RecordedEvent } from '@broker/domain';
import type { Logger } from '@nestjs/common';
import type { Response } from 'express';
import { toEventResponse } from './event.response';

/** The media type of the export (one JSON document per line, https://github.com/ndjson/ndjson-spec). */
export const NDJSON = 'application/x-ndjson';

/** Resolves once the client has taken what was written, or has gone (then nothing more is written). */
function drained(response: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * Issue 17 item 4: streams the export's pages as NDJSON, one event per line, honouring
 * back-pressure, so a range of millions of events is never in memory at once. The first
 * page is read before the headers: a database failure then is an ordinary error answer.
 * A failure after the headers cannot change the status: the response is cut off without
 * its final chunk, so the client sees an incomplete transfer, never a short export that
 * looks complete; the cause goes to the log.
 */
export async function writeNdjsonExport(response: Response, pages: AsyncIterator<RecordedEvent[]>, filename: string, logger: Logger): Promise<void> {
  let page = await pages.next();
  response.writeHead(200, { 'content-type': `${NDJSON}; charset=utf-8`, 'content-disposition': `attachment; filename="${filename}"`, 'cache-control': 'no-store' });
  let written = 0;
  try {
    while (page.done !== true && !response.destroyed) {
      const chunk = page.value.map((event) => `${JSON.stringify(toEventResponse(event))}\n`).join('');
      written += page.value.length;
      if (!response.write(chunk)) await drained(response);
      page = await pages.next();
    }
    response.end();
  } catch (error) {
    logger.error(`event export failed after ${written} events: ${(error as Error).message}`);
    response.destroy();
  } finally {
    // A client that went away mid-export stops the reading of further pages.
    await pages.return?.(undefined);
  }
}
