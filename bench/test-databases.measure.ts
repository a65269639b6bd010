import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { parseConfig } from '@broker/config';
import { Database } from '@broker/persistence';
import {
  prepareMigratedDatabases,
  startPostgresCluster,
  testKey,
  type MigratedDatabases,
  type PostgresCluster,
} from '@broker/testing';
import { Client } from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { takeMachine } from './machine-lock';
import { QUICK } from './load';

/**
 * What one fresh test database costs, ready for a test (every migration applied), on both
 * backends: created empty and migrated (the tests before global setup migrated once) against
 * copied from what global setup migrates once per run (a PGlite dump loaded through
 * `storage.pglite.initial_data`, `CREATE DATABASE ... TEMPLATE`). Each sample opens the
 * database with `runMigrations` (a no-op on a copy) and closes it, as a test does; A B A B.
 * Then the raw PGlite step under both: how an in-memory database was made before (a clone of
 * the process's pristine instance, dumped and loaded again) against loading a dump read once.
 * Prints the median and the range in ms. Numbers only; nothing asserts them.
 *
 * Alone: `npx vitest run --project measure bench/test-databases.measure.ts`.
 */
const ROUNDS = QUICK ? 1 : 5;
const logger = pino({ level: 'silent' });
const KEYS = {
  encryption: { keys: [{ id: 'k', key: testKey() }], current_key_id: 'k' },
  third_party_oauth2: { jwe_keys: [{ id: 'j', key: testKey() }] },
};

async function openAndClose(storage: Record<string, unknown>): Promise<void> {
  const database = await Database.open(parseConfig({ ...KEYS, storage }, {}).config, logger, { runMigrations: true });
  await database.close();
}

async function createDatabase(serverUrl: string, template?: string): Promise<string> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(
      template === undefined ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`,
    );
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `median ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} ms (${Math.round(sorted[0] ?? 0)}-${Math.round(sorted[sorted.length - 1] ?? 0)})`;
}

describe('a fresh test database, ready for a test', () => {
  let release: () => void = () => undefined;
  let cluster: PostgresCluster | undefined;
  let migrated: MigratedDatabases;

  beforeAll(async () => {
    release = await takeMachine();
    cluster = await startPostgresCluster();
    const started = performance.now();
    migrated = await prepareMigratedDatabases(cluster?.url ?? '');
    process.stdout.write(
      `global setup's one-off migrated PGlite dump${cluster ? ' and PostgreSQL template' : ''}: ${Math.round(performance.now() - started)} ms\n`,
    );
  }, 600_000);

  afterAll(async () => {
    await migrated?.cleanup();
    cluster?.stop();
    release();
  });

  it('PGlite: empty and migrated vs loaded from the migrated dump', async () => {
    const empty: number[] = [];
    const copied: number[] = [];
    // The first in-memory database of a process pays initdb once; not counted.
    await openAndClose({ backend: 'pglite', pglite: { data_dir: `memory://${randomBytes(6).toString('hex')}` } });
    for (let round = 0; round < ROUNDS; round += 1) {
      empty.push(
        await timed(() =>
          openAndClose({ backend: 'pglite', pglite: { data_dir: `memory://${randomBytes(6).toString('hex')}` } }),
        ),
      );
      copied.push(
        await timed(() =>
          openAndClose({
            backend: 'pglite',
            pglite: { data_dir: `memory://${randomBytes(6).toString('hex')}`, initial_data: migrated.pgliteDump },
          }),
        ),
      );
    }
    process.stdout.write(
      `PGlite, empty + migrations: ${summary(empty)}\nPGlite, from the dump:      ${summary(copied)}\n`,
    );
  });

  it('PostgreSQL: empty and migrated vs copied from the template', async () => {
    if (cluster === undefined) {
      process.stdout.write('PostgreSQL not installed: skipped\n');
      return;
    }
    const serverUrl = cluster.url;
    const empty: number[] = [];
    const copied: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      empty.push(
        await timed(async () =>
          openAndClose({ backend: 'postgres', postgres: { connection_url: await createDatabase(serverUrl) } }),
        ),
      );
      copied.push(
        await timed(async () =>
          openAndClose({
            backend: 'postgres',
            postgres: { connection_url: await createDatabase(serverUrl, migrated.postgresTemplate) },
          }),
        ),
      );
    }
    process.stdout.write(
      `PostgreSQL, empty + migrations: ${summary(empty)}\nPostgreSQL, from the template: ${summary(copied)}\n`,
    );
  });

  it('PGlite, the raw step: clone + dump + load (before) vs load of a dump kept in memory', async () => {
    const pristine = await PGlite.create('memory://');
    const dump = await pristine.dumpDataDir('none');
    const before: number[] = [];
    const after: number[] = [];
    try {
      for (let round = 0; round < ROUNDS; round += 1) {
        before.push(
          await timed(async () => {
            const clone = await pristine.clone();
            const db = await PGlite.create({ loadDataDir: await clone.dumpDataDir('none') });
            await clone.close();
            await db.close();
          }),
        );
        after.push(await timed(async () => (await PGlite.create({ loadDataDir: dump })).close()));
      }
    } finally {
      await pristine.close();
    }
    process.stdout.write(
      `PGlite raw, clone + dump + load: ${summary(before)}\nPGlite raw, load of a kept dump: ${summary(after)}\n`,
    );
  });
});
