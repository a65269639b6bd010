import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackgroundJob, type JobDefinition } from './background-job';

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function job<T>(definition: Partial<JobDefinition<T>> & Pick<JobDefinition<T>, 'run'>): BackgroundJob<T> {
  return new BackgroundJob<T>({ name: 'test job', intervalMs: 2, failure: 'test job: a run failed', ...definition });
}

describe('BackgroundJob', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never overlaps runs, runs on its interval, and stop waits for the run in progress', async () => {
    let running = 0;
    let overlapped = false;
    let runs = 0;
    const task = job({
      run: async () => {
        running += 1;
        overlapped ||= running > 1;
        await tick(3);
        running -= 1;
        runs += 1;
        return runs;
      },
    });
    const [first, second] = await Promise.all([task.runNow(), task.runNow()]);
    expect([first, second]).toEqual([1, 2]);
    expect(task.started).toBe(false);
    await task.start(() => undefined);
    expect(task.started).toBe(true);
    while (runs < 5) await tick(2);
    await task.stop();
    expect(task.stopping).toBe(true);
    expect(task.started).toBe(false);
    expect(running).toBe(0);
    expect(overlapped).toBe(false);
    const after = runs;
    await tick(20);
    expect(runs).toBe(after);
  });

  it('keeps its schedule after a failed run, and reports every failure to the runner once started', async () => {
    let calls = 0;
    const reported: unknown[] = [];
    const task = job({
      run: () => {
        calls += 1;
        return calls <= 2 ? Promise.reject(new Error(`provider down ${calls}`)) : Promise.resolve(calls);
      },
    });
    await expect(task.runNow()).rejects.toThrow('provider down 1');
    await task.start((error) => reported.push(error));
    while (calls < 3) await tick(2);
    await task.stop();
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(reported).toEqual([new Error('provider down 2')]);
  });

  it("sets an unref'd timer only between start and stop, first after firstRunAfterMs, then after each run", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const run = vi.fn(() => Promise.resolve(0));
    const task = job({ firstRunAfterMs: 1_000, intervalMs: 5_000, run });
    await task.runNow();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(run).toHaveBeenCalledTimes(1);

    await task.start(() => undefined);
    expect((task as unknown as { timer: NodeJS.Timeout }).timer.hasRef()).toBe(false);
    await vi.advanceTimersByTimeAsync(999);
    expect(run).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(run).toHaveBeenCalledTimes(3);

    await task.stop();
    await task.runNow();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(run).toHaveBeenCalledTimes(4);
  });

  it('runs at once when firstRunAfterMs is 0 (start waits for it), then when the run says; undefined sets no timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const delays: (number | undefined)[] = [300, undefined];
    const run = vi.fn(() => Promise.resolve(delays.shift()));
    const task = job({ firstRunAfterMs: 0, intervalMs: 10, nextRunAfterMs: (next) => next, retryAfterMs: 50, run });
    await task.start(() => undefined);
    expect(run).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(299);
    expect(run).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(2);
    // The second run said undefined: nothing until woken.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(run).toHaveBeenCalledTimes(2);

    run.mockRejectedValueOnce(new Error('database down'));
    task.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(3);
    // A failed run retries after retryAfterMs.
    await vi.advanceTimersByTimeAsync(50);
    expect(run).toHaveBeenCalledTimes(4);
    await task.stop();
  });

  it('coalesces wake-ups: one run waits behind the run in progress, however many ask', async () => {
    let release!: () => void;
    let runs = 0;
    const task = job({
      intervalMs: 60_000,
      run: async () => {
        runs += 1;
        if (runs === 1)
          await new Promise<void>((resolve) => {
            release = resolve;
          });
        return runs;
      },
    });
    const first = task.runNow();
    await tick(0);
    for (let i = 0; i < 10; i += 1) task.wake();
    release();
    await first;
    await task.stop();
    expect(runs).toBe(2);
  });
});
