import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closeAfterRefusedBody } from './close-after-refused-body';

/** A request still sending its body, and a response not yet written: the two sides closeAfterRefusedBody sees. */
function exchange(): {
  request: IncomingMessage & EventEmitter;
  response: ServerResponse;
  originalEnd: ServerResponse['end'];
} {
  const request = Object.assign(new EventEmitter(), {
    complete: false,
    destroyed: false,
    resume: () => request,
    socket: { destroy: () => undefined },
  });
  const originalEnd = (() => response) as unknown as ServerResponse['end'];
  const response = {
    headersSent: false,
    destroyed: false,
    setHeader: () => response,
    write: () => true,
    end: originalEnd,
  } as unknown as ServerResponse;
  return { request: request as unknown as IncomingMessage & EventEmitter, response, originalEnd };
}

describe('closeAfterRefusedBody', () => {
  it('lets at most maxConcurrent connections linger at once; a finished drain frees its place', () => {
    const drain = { lingerMs: 60_000, idleMs: 60_000, maxConcurrent: 2 };
    const first = exchange();
    const second = exchange();
    const third = exchange();
    closeAfterRefusedBody(first.request, first.response, drain);
    closeAfterRefusedBody(second.request, second.response, drain);
    closeAfterRefusedBody(third.request, third.response, drain);
    // The first two hold their answer's end while they drain; the third is closed at once.
    expect(first.response.end).not.toBe(first.originalEnd);
    expect(second.response.end).not.toBe(second.originalEnd);
    expect(third.response.end).toBe(third.originalEnd);
    first.request.emit('end');
    second.request.emit('close');
    const fourth = exchange();
    closeAfterRefusedBody(fourth.request, fourth.response, drain);
    expect(fourth.response.end).not.toBe(fourth.originalEnd);
    fourth.request.emit('end');
  });
});
