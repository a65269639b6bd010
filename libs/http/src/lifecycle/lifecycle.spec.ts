import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SystemClock } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { Lifecycle } from './lifecycle';

function exchange(): { request: IncomingMessage; response: ServerResponse & EventEmitter } {
  return {
    request: new EventEmitter() as IncomingMessage,
    response: new EventEmitter() as ServerResponse & EventEmitter,
  };
}

describe('Lifecycle drain', () => {
  it('waits for a handler whose client disconnected before it settled (a refresh still writing), then reports idle', async () => {
    const lifecycle = new Lifecycle(new SystemClock());
    const { request, response } = exchange();
    expect(lifecycle.track(request, response)).toBe(true);
    let settle: () => void = () => undefined;
    const handler = lifecycle.completes(() => new Promise<void>((resolve) => (settle = resolve)));
    // The client goes away: the request's own count ends, the handler is still running.
    response.emit('close');
    lifecycle.beginShutdown();
    expect(await lifecycle.waitForIdle(20)).toBe(false);
    const drained = lifecycle.waitForIdle(5_000);
    settle();
    await handler;
    expect(await drained).toBe(true);
  });

  it('counts a handler that failed as settled', async () => {
    const lifecycle = new Lifecycle(new SystemClock());
    await expect(lifecycle.completes(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await lifecycle.waitForIdle(0)).toBe(true);
  });
});
