import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from './database';
import { MIGRATIONS } from './migrations';

describe.each(testBackends())('Database on $name', (backend) => {
  let database: Database;
  const logs = new LogCapture();

  beforeAll(async () => {
    // Empty: these tests apply and revert the migrations themselves.
    const config = testConfig({ storage: await backend.storage({ empty: true }) });
    database = await Database.open(config, createLogger(config, logs), { runMigrations: false });
  });

  afterAll(async () => {
    await database.close();
  });

  it('applies every migration to an empty database and reverts them all', async () => {
    expect(await database.appliedMigrations()).toEqual([]);
    const applied = await database.migrate();
    expect(applied).toEqual(MIGRATIONS.map((migration) => new migration().name));
    expect(await database.appliedMigrations()).toEqual(applied);
    // A second run finds nothing to do.
    expect(await database.migrate()).toEqual([]);

    expect(await database.revertAll()).toBe(MIGRATIONS.length);
    const tables = await database.dataSource.query<{ table_name: string }[]>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'broker_migrations'",
    );
    expect(tables).toEqual([]);

    await database.migrate();
    expect(await database.appliedMigrations()).toHaveLength(MIGRATIONS.length);
  });

  it('keeps one installation record, created once', async () => {
    const first = await database.installation();
    const second = await database.installation();
    expect(second).toEqual(first);
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('isolates concurrent transactions: a rolled-back row is never seen, a committed one is', async () => {
    await database.dataSource.query('CREATE TABLE IF NOT EXISTS tx_probe (id text PRIMARY KEY)');
    let releaseRollback!: () => void;
    const rollbackMayFinish = new Promise<void>((resolve) => {
      releaseRollback = resolve;
    });
    const seenByCommitter: string[][] = [];

    const rollingBack = database
      .transaction(async (manager) => {
        await manager.query("INSERT INTO tx_probe (id) VALUES ('rolled-back')");
        await rollbackMayFinish;
        throw new Error('roll back on purpose');
      })
      .catch((error: Error) => error.message);

    const committing = database.transaction(async (manager) => {
      await manager.query("INSERT INTO tx_probe (id) VALUES ('committed')");
      const rows = await manager.query<{ id: string }[]>('SELECT id FROM tx_probe ORDER BY id');
      seenByCommitter.push(rows.map((row) => row.id));
    });

    // Let both transactions be under way before the first one rolls back.
    await new Promise((resolve) => setTimeout(resolve, 50));
    releaseRollback();
    expect(await rollingBack).toBe('roll back on purpose');
    await committing;

    expect(seenByCommitter).toEqual([['committed']]);
    const rows = await database.dataSource.query<{ id: string }[]>('SELECT id FROM tx_probe ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual(['committed']);
  });

  it('answers the health probe and never logs query parameters', async () => {
    await database.ping(2_000);
    await expect(
      database.dataSource.query('SELECT * FROM no_such_table WHERE id = $1', ['parameter-secret-value']),
    ).rejects.toThrow();
    expect(logs.leaked(['parameter-secret-value'])).toEqual([]);
  });
});
