import { BackgroundJob, type HasBackgroundJob, type JobDefinition } from '@broker/domain';
import { createLogger } from '@broker/http';
import { LogCapture, testConfig } from '@broker/testing';
import { PinoLogger } from 'nestjs-pino';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import { describe, expect, it, vi } from 'vitest';
import { JobRunner } from './job-runner';

// nestjs-pino's PinoLogger writes to the first root logger it was given in the process, and unit specs share their
// worker's modules: forget an earlier file's logger, so this file's capture is the one written to.
__resetOutOfContextForTests();
const logs = new LogCapture();
const logger = new PinoLogger({ pinoHttp: { logger: createLogger(testConfig(), logs) } });

function provider<T>(definition: Partial<JobDefinition<T>> & Pick<JobDefinition<T>, 'run'>): HasBackgroundJob {
  return {
    job: new BackgroundJob<T>({ name: 'job', intervalMs: 60_000, failure: 'job: a run failed', ...definition }),
  };
}

describe('JobRunner', () => {
  it('starts the enabled jobs when the application has started, and only those', async () => {
    const on = provider({ name: 'on', run: () => Promise.resolve(0) });
    const off = provider({ name: 'off', enabled: false, run: () => Promise.resolve(0) });
    const runner = new JobRunner([on, off], logger);
    expect(on.job.started).toBe(false);
    await runner.onApplicationBootstrap();
    expect(on.job.started).toBe(true);
    expect(off.job.started).toBe(false);
    await runner.onModuleDestroy();
    expect(on.job.started).toBe(false);
    expect(on.job.stopping && off.job.stopping).toBe(true);
  });

  it("logs a failed run one way (job and the error's safe fields, never the query's parameters)", async () => {
    const secret = 'refresh-token-that-must-not-be-logged';
    const failing = provider({
      name: 'SomeRetention',
      firstRunAfterMs: 0,
      failure: 'some retention: purging old rows failed; the next run retries',
      run: () =>
        Promise.reject(
          Object.assign(new Error('connection terminated'), { parameters: [secret], query: `DELETE ... ${secret}` }),
        ),
    });
    const runner = new JobRunner([failing], logger);
    const mark = logs.lines.length;
    await runner.onApplicationBootstrap();
    await runner.onModuleDestroy();
    expect(logs.records().slice(mark)).toEqual([
      expect.objectContaining({
        level: 'warn',
        context: 'jobs',
        job: 'SomeRetention',
        err: expect.objectContaining({ type: 'Error', message: 'connection terminated' }) as unknown,
        msg: 'some retention: purging old rows failed; the next run retries',
      }),
    ]);
    expect(logs.leaked([secret])).toEqual([]);
  });

  it('stops every job at shutdown, waiting for the run in progress', async () => {
    let release!: () => void;
    const run = vi.fn(
      () =>
        new Promise<number>((resolve) => {
          release = () => resolve(1);
        }),
    );
    const slow = provider({ firstRunAfterMs: 1, run });
    const runner = new JobRunner([slow], logger);
    await runner.onApplicationBootstrap();
    await vi.waitFor(() => expect(run).toHaveBeenCalledTimes(1));
    let stopped = false;
    const stopping = runner.onModuleDestroy().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(slow.job.started).toBe(false);
    expect(run).toHaveBeenCalledTimes(1);
  });
});
