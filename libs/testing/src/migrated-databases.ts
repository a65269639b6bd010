import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '@broker/config';
import { Database } from '@broker/persistence';
import { Client } from 'pg';
import pino from 'pino';
import { testKey } from './test-config';

/** What global setup migrated once for the run (see `prepareMigratedDatabases`). */
export interface MigratedDatabases {
  /** A PGlite data directory dump with every migration applied (`storage.pglite.initial_data`). */
  readonly pgliteDump: string;
  /** A template database on the PostgreSQL server with every migration applied ('' without a server). */
  readonly postgresTemplate: string;
  /** Removes the dump and drops the template. */
  cleanup(): Promise<void>;
}

async function onServer<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Opens `storage` with every migration applied, hands it to `work`, closes it. */
async function migrated(storage: Record<string, unknown>, work: (database: Database) => Promise<void>): Promise<void> {
  const keys = {
    encryption: { keys: [{ id: 'template', key: testKey() }], current_key_id: 'template' },
    third_party_oauth2: { jwe_keys: [{ id: 'template', key: testKey() }] },
  };
  const { config } = parseConfig({ ...keys, storage }, {});
  const database = await Database.open(config, pino({ level: 'silent' }), { runMigrations: true });
  try {
    await work(database);
  } finally {
    await database.close();
  }
}

/**
 * Global setup, once per run (in vitest's main process, where `inject` does not exist):
 * applies every migration (the project's own `Database.open` with `runMigrations`, so a
 * migration added to MIGRATIONS is in) to one PGlite database, dumped to a file, and to
 * one template database on the PostgreSQL server. A fresh test database is then a copy
 * (a fraction of a second) instead of an empty database migrated again (seconds each).
 */
export async function prepareMigratedDatabases(serverUrl: string): Promise<MigratedDatabases> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-test-template-'));
  const pgliteDump = join(dir, 'pglite-migrated.tar');
  let postgresTemplate = '';
  const cleanup = async (): Promise<void> => {
    rmSync(dir, { recursive: true, force: true });
    if (postgresTemplate) {
      await onServer(serverUrl, async (client) => {
        await client.query(`ALTER DATABASE ${postgresTemplate} WITH IS_TEMPLATE false`);
        await client.query(`DROP DATABASE ${postgresTemplate}`);
      });
    }
  };
  try {
    await migrated(
      { backend: 'pglite', pglite: { data_dir: `memory://template-${randomBytes(6).toString('hex')}` } },
      (database) => database.dumpPglite(pgliteDump),
    );
    if (serverUrl) {
      const name = `broker_template_${randomBytes(6).toString('hex')}`;
      await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
      postgresTemplate = name;
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      await migrated({ backend: 'postgres', postgres: { connection_url: url.toString(), pool_size: 1 } }, () =>
        Promise.resolve(),
      );
      // No connection to the template from now on: CREATE DATABASE ... TEMPLATE refuses while one exists.
      await onServer(serverUrl, (client) =>
        client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`),
      );
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { pgliteDump, postgresTemplate, cleanup };
}
