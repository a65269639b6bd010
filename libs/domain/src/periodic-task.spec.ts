import { describe, expect, it } from 'vitest';
import { PeriodicTask } from './periodic-task';

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('PeriodicTask', () => {
  it('never overlaps runs, runs on its interval, and stop waits for the run in progress', async () => {
    let running = 0;
    let overlapped = false;
    let runs = 0;
    const task = new PeriodicTask(async () => {
      running += 1;
      overlapped ||= running > 1;
      await tick(3);
      running -= 1;
      runs += 1;
      return runs;
    }, 2);
    const [first, second] = await Promise.all([task.runNow(), task.runNow()]);
    expect([first, second]).toEqual([1, 2]);
    task.start();
    while (runs < 5) await tick(2);
    await task.stop();
    expect(task.stopping).toBe(true);
    expect(running).toBe(0);
    expect(overlapped).toBe(false);
    const after = runs;
    await tick(20);
    expect(runs).toBe(after);
  });

  it('keeps its schedule after a failed run', async () => {
    let calls = 0;
    const task = new PeriodicTask(() => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('provider down')) : Promise.resolve(calls);
    }, 2);
    await expect(task.runNow()).rejects.toThrow('provider down');
    task.start();
    while (calls < 3) await tick(2);
    await task.stop();
    expect(calls).toBeGreaterThanOrEqual(3);
  });
});
