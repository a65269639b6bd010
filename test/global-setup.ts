import { readTestEnvironment } from '@broker/config';
import { prepareMigratedDatabases, startPostgresCluster } from '@broker/testing';
import type { TestProject } from 'vitest/node';

interface Databases {
  readonly serverUrl: string;
  readonly migrated: Awaited<ReturnType<typeof prepareMigratedDatabases>>;
  readonly stopCluster: () => void;
}

/**
 * The run's databases, shared by the projects of one run (`unit` and `tests` both name this
 * setup): the first project's call starts them, the last teardown stops them.
 */
const shared = globalThis as typeof globalThis & { brokerTestDatabases?: { ready: Promise<Databases>; users: number } };

/**
 * Decides where the database tests run: `TEST_DATABASE_URL` if set; else a throwaway
 * cluster when initdb/pg_ctl exist; else PGlite only, which under CI=true is a failure.
 * Then migrates one database per backend, which fresh test databases are copies of
 * (README "Tests").
 */
async function startDatabases(): Promise<Databases> {
  const env = readTestEnvironment();
  let serverUrl = '';
  let stopCluster = (): void => undefined;
  if (env.databaseUrl) {
    process.stdout.write('database tests: PGlite and PostgreSQL at TEST_DATABASE_URL\n');
    serverUrl = env.databaseUrl;
  } else {
    const cluster = await startPostgresCluster();
    if (cluster === undefined) {
      if (env.ci)
        throw new Error(
          'CI=true but PostgreSQL (initdb/pg_ctl) is not installed: the PostgreSQL test variant must run in CI',
        );
      process.stdout.write('database tests: PostgreSQL not installed (no initdb/pg_ctl), running on PGlite only\n');
    } else {
      process.stdout.write(
        `database tests: PGlite and a throwaway ${cluster.version} cluster (${new URL(cluster.url).host})\n`,
      );
      serverUrl = cluster.url;
      stopCluster = () => cluster.stop();
    }
  }
  try {
    return { serverUrl, migrated: await prepareMigratedDatabases(serverUrl), stopCluster };
  } catch (error) {
    stopCluster();
    throw error;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const state = (shared.brokerTestDatabases ??= { ready: startDatabases(), users: 0 });
  state.users += 1;
  const { serverUrl, migrated, stopCluster } = await state.ready;
  project.provide('postgresUrl', serverUrl);
  project.provide('postgresTemplate', migrated.postgresTemplate);
  project.provide('pgliteDump', migrated.pgliteDump);
  return async () => {
    state.users -= 1;
    if (state.users > 0) return;
    shared.brokerTestDatabases = undefined;
    try {
      await migrated.cleanup();
    } finally {
      stopCluster();
    }
  };
}
