import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from './database';
import { runCountingQueries, type QueryCount } from './query-count';

describe.each(testBackends())('query counting on $name', (backend) => {
  let database: Database;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('counts every statement sent inside the scope, transaction control included, and nothing outside it', async () => {
    const count: QueryCount = { queries: 0 };
    await runCountingQueries(count, async () => {
      await database.dataSource.query('SELECT 1');
      await database.transaction(async (manager) => {
        await manager.query('SELECT 2');
        await manager.query('SELECT 3');
      });
    });
    // SELECT 1, BEGIN, SELECT 2, SELECT 3, COMMIT.
    expect(count.queries).toBe(5);
    await database.dataSource.query('SELECT 4');
    expect(count.queries).toBe(5);
  });

  it('keeps concurrent scopes apart (each request has its own count)', async () => {
    const first: QueryCount = { queries: 0 };
    const second: QueryCount = { queries: 0 };
    const send = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i += 1) await database.dataSource.query('SELECT $1::int', [i]);
    };
    await Promise.all([runCountingQueries(first, () => send(3)), runCountingQueries(second, () => send(7))]);
    expect([first.queries, second.queries]).toEqual([3, 7]);
  });
});
