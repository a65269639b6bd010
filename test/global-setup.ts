import { readTestEnvironment } from '@broker/config';
import { startPostgresCluster } from '@broker/testing';
import type { TestProject } from 'vitest/node';

/**
 * Decides where the database tests run: `TEST_DATABASE_URL` if set; else a throwaway
 * cluster when initdb/pg_ctl exist; else PGlite only, which under CI=true is a failure.
 */
export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const env = readTestEnvironment();
  if (env.databaseUrl) {
    process.stdout.write('database tests: PGlite and PostgreSQL at TEST_DATABASE_URL\n');
    project.provide('postgresUrl', env.databaseUrl);
    return undefined;
  }
  const cluster = await startPostgresCluster();
  if (cluster === undefined) {
    if (env.ci) throw new Error('CI=true but PostgreSQL (initdb/pg_ctl) is not installed: the PostgreSQL test variant must run in CI');
    process.stdout.write('database tests: PostgreSQL not installed (no initdb/pg_ctl), running on PGlite only\n');
    project.provide('postgresUrl', '');
    return undefined;
  }
  process.stdout.write(`database tests: PGlite and a throwaway ${cluster.version} cluster (${new URL(cluster.url).host})\n`);
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
