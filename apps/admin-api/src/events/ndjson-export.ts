import type { Logger } from '@nestjs/common';
import type { Response } from 'express';
import { toEventResponse } from './event.response';
import { type RecordedEvent } from '@broker/events';

/** The media type of the export (one JSON document per line, https://github.com/ndjson/ndjson-spec). */
export const NDJSON = 'application/x-ndjson';

/**
 * The client is gone: the response was destroyed, or the connection it was to go out on has
 * closed. An answer queued behind an earlier one on a pipelined connection (RFC 9112 §9.3.2)
 * has no socket yet, so it is never closed or destroyed itself when the client goes.
 */
function clientGone(response: Response): boolean {
  return response.destroyed || response.req?.socket?.destroyed === true;
}

/**
 * Resolves once the client has taken what was written, or is gone (then nothing more is
 * written): at once when it already is, else on the response's drain, close or error or
 * the connection's close, whichever comes first.
 */
function drained(response: Response): Promise<void> {
  if (clientGone(response)) return Promise.resolve();
  const connection = response.req?.socket;
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      response.off('error', done);
      connection?.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
    response.on('error', done);
    connection?.on('close', done);
  });
}

/**
 * Streams the export's pages as NDJSON, one event per line, honouring
 * back-pressure, so a range of millions of events is never in memory at once. The first
 * page is read before the headers: a database failure then is an ordinary error answer.
 * A failure after the headers cannot change the status: the response is cut off without
 * its final chunk, so the client sees an incomplete transfer, never a short export that
 * looks complete; the cause goes to the log.
 */
export async function writeNdjsonExport(
  response: Response,
  pages: AsyncIterator<RecordedEvent[]>,
  filename: string,
  logger: Logger,
): Promise<void> {
  let page = await pages.next();
  response.writeHead(200, {
    'content-type': `${NDJSON}; charset=utf-8`,
    'content-disposition': `attachment; filename="${filename}"`,
    'cache-control': 'no-store',
  });
  let written = 0;
  try {
    while (page.done !== true && !clientGone(response)) {
      const chunk = page.value.map((event) => `${JSON.stringify(toEventResponse(event))}\n`).join('');
      written += page.value.length;
      if (!response.write(chunk)) await drained(response);
      page = await pages.next();
    }
    // A response to a client that is gone is dropped, never ended: ending it would queue the rest for a connection that is closed.
    if (clientGone(response)) response.destroy();
    else response.end();
  } catch (error) {
    logger.error(`event export failed after ${written} events: ${(error as Error).message}`);
    response.destroy();
  } finally {
    // A client that went away mid-export stops the reading of further pages.
    await pages.return?.(undefined);
  }
}
