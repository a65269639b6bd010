import { describe, expect, it } from 'vitest';
import { LongPollHub } from './long-poll-hub';

const never = (): AbortSignal => new AbortController().signal;

describe('LongPollHub', () => {
  it('answers timeout when nothing changes, and holds no waiter afterwards', async () => {
    const hub = new LongPollHub();
    expect(await hub.wait(3, 20, never())).toBe('timeout');
    expect(hub.held).toBe(0);
  });

  it('wakes the waiters behind a new version, leaving those already past it', async () => {
    const hub = new LongPollHub();
    hub.changed(5);
    const behind = hub.wait(4, 10_000, never());
    const current = hub.wait(5, 30, never());
    expect(await behind).toBe('changed');
    const waiting = hub.wait(5, 10_000, never());
    hub.changed(6);
    expect(await waiting).toBe('changed');
    expect(await current).toBe('changed');
    expect(hub.held).toBe(0);
  });

  it('counts a version announced before the wait began (no lost wake-up)', async () => {
    const hub = new LongPollHub();
    hub.changed(8);
    expect(await hub.wait(7, 10_000, never())).toBe('changed');
  });

  it('frees a waiter at once when its client goes away', async () => {
    const hub = new LongPollHub();
    const controller = new AbortController();
    const pending = hub.wait(1, 60_000, controller.signal);
    const other = hub.wait(1, 60_000, never());
    expect(hub.held).toBe(2);
    controller.abort();
    expect(await pending).toBe('aborted');
    expect(hub.held).toBe(1);
    hub.shutdown();
    expect(await other).toBe('shutdown');
  });

  it('answers every waiter on shutdown and refuses new ones', async () => {
    const hub = new LongPollHub();
    const waits = Array.from({ length: 1000 }, (_, i) => hub.wait(i, 60_000, never()));
    hub.shutdown();
    expect(new Set(await Promise.all(waits))).toEqual(new Set(['shutdown']));
    expect(await hub.wait(0, 60_000, never())).toBe('shutdown');
  });

  it('wakes everyone on a resync, and asks for a re-check of timeouts during a feed outage', async () => {
    const hub = new LongPollHub();
    const woken = hub.wait(9, 60_000, never());
    hub.resync();
    expect(await woken).toBe('changed');
    const during = hub.wait(9, 20, never());
    hub.feedLost();
    expect(await during).toBe('recheck');
  });

  it('serves many deadlines with one timer, earliest first', async () => {
    const hub = new LongPollHub();
    const order: number[] = [];
    await Promise.all([60, 20, 40].map((ms) => hub.wait(1, ms, never()).then(() => order.push(ms))));
    expect(order).toEqual([20, 40, 60]);
  });
});
