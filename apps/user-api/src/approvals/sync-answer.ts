import { etagOf, type SyncAnswer } from '@broker/approvals';
import type { HeadersObject } from '@nestjs/swagger';
import type { Response } from 'express';
import { toSyncView } from './approval.response';

/** The headers of both sync answers, as {@link writeSyncAnswer} writes them (for the OpenAPI contract). */
export const SYNC_HEADERS: HeadersObject = {
  ETag: {
    description: 'the version of the state, `"v<N>"`: send it back in `If-None-Match` to wait for a change',
    schema: { type: 'string', pattern: '^"v[0-9]+"$' },
  },
  'Cache-Control': { description: 'never cached by intermediaries', schema: { type: 'string', enum: ['no-store'] } },
};

/**
 * Writes a sync answer: 200 with `ETag: "v<N>"` and the state, or 304 with the same ETag
 * (during shutdown with `Connection: close`, so the gateway reconnects to a live replica).
 * Never cached by intermediaries. A client that went away gets nothing.
 */
export function writeSyncAnswer(response: Response, answer: SyncAnswer): void {
  if (answer.kind === 'aborted') return;
  response.setHeader('ETag', etagOf(answer.version));
  response.setHeader('Cache-Control', 'no-store');
  if (answer.kind === 'state') {
    response.status(200).json({ data: toSyncView(answer.pairs) });
    return;
  }
  if (answer.closing) response.setHeader('Connection', 'close');
  response.status(304).end();
}
