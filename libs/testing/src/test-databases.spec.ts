import { createLogger } from '@broker/http';
import { Database } from '@broker/persistence';
import { afterEach, describe, expect, it } from 'vitest';
import { LogCapture } from './log-capture';
import { testConfig, type FreshDatabaseOptions } from './test-config';
import { testBackends, type TestBackend } from './test-databases';

describe.each(testBackends())('fresh test databases on $name', (backend) => {
  const opened: Database[] = [];

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((database) => database.close()));
  });

  async function applied(from: TestBackend, options?: FreshDatabaseOptions): Promise<number> {
    const config = testConfig({ storage: await from.storage(options) });
    const database = await Database.open(config, createLogger(config, new LogCapture()), { runMigrations: false });
    opened.push(database);
    return (await database.appliedMigrations()).length;
  }

  it('start with every migration applied (a copy of the one global setup migrated)', async () => {
    expect(await applied(backend)).toBeGreaterThan(0);
    const config = testConfig({ storage: await backend.storage() });
    const database = await Database.open(config, createLogger(config, new LogCapture()), { runMigrations: false });
    opened.push(database);
    expect(await database.migrate()).toEqual([]);
  });

  it('start empty when asked to (the tests about migrations)', async () => {
    expect(await applied(backend, { empty: true })).toBe(0);
  });

  it('are separate databases: a row written in one is not in the next', async () => {
    const config = testConfig({ storage: await backend.storage() });
    const first = await Database.open(config, createLogger(config, new LogCapture()), { runMigrations: false });
    opened.push(first);
    const installation = await first.installation();
    const next = testConfig({ storage: await backend.storage() });
    const second = await Database.open(next, createLogger(next, new LogCapture()), { runMigrations: false });
    opened.push(second);
    expect((await second.installation()).id).not.toBe(installation.id);
  });
});
