import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseConfig } from '@broker/config';
import { createLogger } from '@broker/http';
import { LogCapture, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { MIGRATIONS } from '../migrations';

const memory = (): string => `memory://${randomBytes(6).toString('hex')}`;

async function open(pglite: Record<string, unknown>, runMigrations = false): Promise<Database> {
  const config = testConfig({ storage: { backend: 'pglite', pglite: { initial_data: undefined, ...pglite } } });
  return Database.open(config, createLogger(config, new LogCapture()), { runMigrations });
}

describe('storage.pglite.initial_data: a new PGlite database starts from a dump', () => {
  let dir: string;
  let dump: string;
  let installationId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-initial-data-'));
    dump = join(dir, 'seed.tar');
    const seed = await open({ data_dir: memory() }, true);
    try {
      installationId = (await seed.installation()).id;
      await seed.dumpPglite(dump);
    } finally {
      await seed.close();
    }
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a documented, optional config key', () => {
    const { config } = parseConfig({ storage: { pglite: { initial_data: '/srv/seed.tar' } } }, {});
    expect(config.storage.pglite.initial_data).toBe('/srv/seed.tar');
    expect(parseConfig({}, {}).config.storage.pglite.initial_data).toBeUndefined();
  });

  it('seeds an in-memory database with the dump: migrations applied and rows present', async () => {
    const database = await open({ data_dir: memory(), initial_data: dump });
    try {
      expect(await database.appliedMigrations()).toEqual(MIGRATIONS.map((migration) => new migration().name));
      expect(await database.migrate()).toEqual([]);
      expect((await database.installation()).id).toBe(installationId);
    } finally {
      await database.close();
    }
  });

  it('seeds a new data directory once, and leaves an existing database alone', async () => {
    const dataDir = join(dir, 'pglite');
    const first = await open({ data_dir: dataDir, initial_data: dump });
    try {
      expect(await first.appliedMigrations()).toHaveLength(MIGRATIONS.length);
      expect((await first.installation()).id).toBe(installationId);
      await first.dataSource.query('CREATE TABLE kept (id text)');
    } finally {
      await first.close();
    }
    const again = await open({ data_dir: dataDir, initial_data: dump });
    try {
      expect(await again.dataSource.query("SELECT to_regclass('kept') IS NOT NULL AS present")).toEqual([
        { present: true },
      ]);
    } finally {
      await again.close();
    }
  });

  it('without it, an in-memory database starts empty', async () => {
    const database = await open({ data_dir: memory() });
    try {
      expect(await database.appliedMigrations()).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('fails to open, naming the file, when the dump does not exist', async () => {
    const missing = join(dir, 'missing.tar');
    await expect(open({ data_dir: memory(), initial_data: missing })).rejects.toThrow(missing);
  });
});
