import { readTestEnvironment } from '@broker/config';
import { prepareMigratedDatabases, startPostgresCluster } from '@broker/testing';
import type { TestProject } from 'vitest/node';

/**
 * Decides where the database tests run: `TEST_DATABASE_URL` if set; else a throwaway
 * cluster when initdb/pg_ctl exist; else PGlite only, which under CI=true is a failure.
 * Then migrates one database per backend, which fresh test databases are copies of
 * (README "Two commands").
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = readTestEnvironment();
  let serverUrl = '';
  let stopCluster = (): void => undefined;
  if (env.databaseUrl) {
    process.stdout.write('database tests: PGlite and PostgreSQL at TEST_DATABASE_URL\n');
    serverUrl = env.databaseUrl;
  } else {
    const cluster = await startPostgresCluster();
    if (cluster === undefined) {
      if (env.ci) throw new Error('CI=true but PostgreSQL (initdb/pg_ctl) is not installed: the PostgreSQL test variant must run in CI');
      process.stdout.write('database tests: PostgreSQL not installed (no initdb/pg_ctl), running on PGlite only\n');
    } else {
      process.stdout.write(`database tests: PGlite and a throwaway ${cluster.version} cluster (${new URL(cluster.url).host})\n`);
      serverUrl = cluster.url;
      stopCluster = () => cluster.stop();
    }
  }
  let migrated: Awaited<ReturnType<typeof prepareMigratedDatabases>>;
  try {
    migrated = await prepareMigratedDatabases(serverUrl);
  } catch (error) {
    stopCluster();
    throw error;
  }
  project.provide('postgresUrl', serverUrl);
  project.provide('postgresTemplate', migrated.postgresTemplate);
  project.provide('pgliteDump', migrated.pgliteDump);
  return async () => {
    try {
      await migrated.cleanup();
    } finally {
      stopCluster();
    }
  };
}
