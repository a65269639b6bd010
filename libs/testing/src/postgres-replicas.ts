import { createLogger } from '@broker/http';
import { Database } from '@broker/persistence';
import { LogCapture } from './log-capture';
import { testConfig } from './test-config';
import { createPostgresDatabase } from './test-databases';

/**
 * Two broker replicas' databases on one new PostgreSQL database: each its own `Database` (pool,
 * LISTEN connection, caches), as two processes have. Close both after the test.
 */
export async function openPostgresReplicas(): Promise<[Database, Database]> {
  const config = testConfig({
    storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
  });
  const open = (): Promise<Database> => Database.open(config, createLogger(config, new LogCapture()));
  const a = await open();
  try {
    return [a, await open()];
  } catch (error) {
    await a.close();
    throw error;
  }
}

/** How many LISTEN connections of the broker are open on `database`'s PostgreSQL database. */
export async function listenSessions(database: Database): Promise<number> {
  const rows = await database.dataSource.query<{ n: number }[]>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'agent-identity-broker-listen' AND datname = current_database()",
  );
  return rows[0]?.n ?? 0;
}
