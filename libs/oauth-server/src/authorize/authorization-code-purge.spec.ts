import { randomUUID } from 'node:crypto';
import { JobRunner } from '@broker/bootstrap';
import { createLogger } from '@broker/http';
import { AuthorizationCodeRepository, Database } from '@broker/persistence';
import { FrozenClock, LogCapture, testBackends, testConfig } from '@broker/testing';
import { PinoLogger } from 'nestjs-pino';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUTHORIZATION_CODE_PURGE, AuthorizationCodePurge } from './authorization-code-purge';

const { batchSize, firstRunDelayMs, intervalMs } = AUTHORIZATION_CODE_PURGE;

// nestjs-pino's PinoLogger writes to the first root logger it was given in the process, and unit specs share their
// worker's modules: forget an earlier file's logger, so this file's capture is the one written to.
__resetOutOfContextForTests();
const logs = new LogCapture();
const logger = new PinoLogger({ pinoHttp: { logger: createLogger(testConfig(), logs) } });

/** Log records written since `mark` (a `logs.lines.length`). */
function recordsSince(mark: number): Record<string, unknown>[] {
  return logs.records().slice(mark);
}

describe.each(testBackends())('AuthorizationCodePurge on $name', (backend) => {
  let database: Database;
  let codes: AuthorizationCodeRepository;
  let agentId: string;
  const clock = new FrozenClock('2026-03-01T10:00:00Z');

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    codes = new AuthorizationCodeRepository(database.dataSource);
    agentId = randomUUID();
    await database.dataSource.query(
      "INSERT INTO agents (id, display_name, created_at, updated_at) VALUES ($1, 'Agent', now(), now())",
      [agentId],
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  /** `count` codes numbered from `first`, all expiring at `expiresAt`. */
  async function insertCodes(first: number, count: number, expiresAt: Date): Promise<void> {
    await database.dataSource.query(
      `INSERT INTO authorization_codes (code_sha256, agent_id, principal, redirect_uri, code_challenge, scopes, expires_at, created_at)
       SELECT decode(lpad(to_hex(i), 64, '0'), 'hex'), $1, 'alice', 'https://agent.example.com/cb', 'challenge', '[]', $2, $2::timestamptz - interval '60 seconds'
         FROM generate_series($3::int, $3::int + $4::int - 1) AS i`,
      [agentId, expiresAt, first, count],
    );
  }

  async function remaining(): Promise<number> {
    const rows = await database.dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM authorization_codes');
    return (rows[0] as { n: number }).n;
  }

  function digest(n: number): Buffer {
    return Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
  }

  it('deletes expired codes in bounded batches and keeps live ones redeemable', async () => {
    const now = clock.now();
    const expired = 2 * batchSize + 500;
    await insertCodes(1, expired - 1, new Date(now.getTime() - 120_000));
    // Expiring exactly now is expired: the grant refuses it (expires_at <= now).
    await insertCodes(expired, 1, now);
    await insertCodes(100_000, 3, new Date(now.getTime() + 30_000));

    const spy = vi.spyOn(codes, 'purgeExpired');
    const purge = new AuthorizationCodePurge(codes, clock, logger);
    const mark = logs.lines.length;
    expect(await purge.purge()).toBe(expired);
    const batches = await Promise.all(spy.mock.results.map((result) => result.value as Promise<number>));
    expect(batches).toEqual([batchSize, batchSize, 500]);
    expect(spy.mock.calls.every(([cutoff, limit]) => cutoff.getTime() === now.getTime() && limit === batchSize)).toBe(
      true,
    );
    expect(await remaining()).toBe(3);
    expect(recordsSince(mark).filter((record) => record.msg === 'expired authorization codes purged')).toEqual([
      expect.objectContaining({ purged: expired, level: 'info' }),
    ]);

    // Nothing left to purge: one statement, nothing deleted.
    spy.mockClear();
    expect(await purge.purge()).toBe(0);
    expect(spy).toHaveBeenCalledTimes(1);

    expect(await codes.redeem(digest(100_000))).toMatchObject({ agentId, principal: 'alice' });
    clock.advance(30_000);
    expect(await purge.purge()).toBe(2);
    expect(await remaining()).toBe(0);
    spy.mockRestore();
  });

  it('never deletes a code before its expiry', async () => {
    const now = clock.now();
    await insertCodes(200_000, 5, new Date(now.getTime() + 1));
    expect(await codes.purgeExpired(now, batchSize)).toBe(0);
    expect(await remaining()).toBe(5);
    clock.advance(1);
    expect(await codes.purgeExpired(clock.now(), 2)).toBe(2);
    expect(await remaining()).toBe(3);
  });
});

describe('AuthorizationCodePurge schedule', () => {
  const clock = new FrozenClock('2026-03-01T10:00:00Z');

  afterEach(() => {
    vi.useRealTimers();
  });

  function stubCodes(purgeExpired: AuthorizationCodeRepository['purgeExpired']): AuthorizationCodeRepository {
    return { purgeExpired } as unknown as AuthorizationCodeRepository;
  }

  it("runs shortly after start, then every interval, from an unref'd timer, and not after stop", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const purgeExpired = vi.fn<AuthorizationCodeRepository['purgeExpired']>().mockResolvedValue(0);
    const purge = new AuthorizationCodePurge(stubCodes(purgeExpired), clock, logger);
    const runner = new JobRunner([purge], logger);
    await runner.onApplicationBootstrap();
    const timer = (purge.job as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(false);

    await vi.advanceTimersByTimeAsync(firstRunDelayMs - 1);
    expect(purgeExpired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(intervalMs);
    expect(purgeExpired).toHaveBeenCalledTimes(2);

    await runner.onModuleDestroy();
    await vi.advanceTimersByTimeAsync(10 * intervalMs);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
  });

  it("logs a failure without the query's parameters, keeps the process up and retries at the next run", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const secret = 'c0de-digest-that-must-not-be-logged';
    const purgeExpired = vi
      .fn<AuthorizationCodeRepository['purgeExpired']>()
      .mockRejectedValueOnce(
        Object.assign(new Error('connection terminated'), { parameters: [secret], query: `DELETE ... ${secret}` }),
      )
      .mockResolvedValue(7);
    const purge = new AuthorizationCodePurge(stubCodes(purgeExpired), clock, logger);
    const mark = logs.lines.length;
    const runner = new JobRunner([purge], logger);
    await runner.onApplicationBootstrap();

    await vi.advanceTimersByTimeAsync(firstRunDelayMs);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    const failure = recordsSince(mark).find((record) => record.level === 'warn');
    expect(failure).toMatchObject({
      msg: 'purging expired authorization codes failed; the next run retries',
      err: { message: 'connection terminated' },
    });
    expect(logs.leaked([secret])).toEqual([]);

    await vi.advanceTimersByTimeAsync(intervalMs);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    expect(recordsSince(mark).find((record) => record.msg === 'expired authorization codes purged')).toMatchObject({
      purged: 7,
    });
    await runner.onModuleDestroy();
  });

  it('stops between batches when the server shuts down, after the batch in flight', async () => {
    let release!: (deleted: number) => void;
    const purgeExpired = vi.fn<AuthorizationCodeRepository['purgeExpired']>().mockImplementation(
      () =>
        new Promise<number>((resolve) => {
          release = resolve;
        }),
    );
    const purge = new AuthorizationCodePurge(stubCodes(purgeExpired), clock, logger);
    const running = purge.purge();
    await vi.waitFor(() => expect(purgeExpired).toHaveBeenCalledTimes(1));
    let stopped = false;
    const stopping = purge.job.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    // stop() waits for the batch in flight (the database closes after it).
    expect(stopped).toBe(false);
    release(batchSize);
    await stopping;
    expect(await running).toBe(batchSize);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
  });
});
