import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { inject } from 'vitest';
import { pgliteStorage, type FreshDatabaseOptions } from './test-config';

/** A database backend a database test runs on. */
export interface TestBackend {
  readonly name: 'pglite' | 'postgres';
  /** A fresh database's storage config: every migration applied, or none with `{ empty: true }`. */
  storage(options?: FreshDatabaseOptions): Promise<Record<string, unknown>>;
}

/** The PostgreSQL server of this test run ('' when only PGlite runs). */
export function postgresServerUrl(): string {
  return inject('postgresUrl');
}

/**
 * Creates a database on a PostgreSQL server and returns its URL. On the run's server it
 * is a copy of the template global setup migrated (every migration applied) unless
 * `empty`; on any other server (the benchmarks' own clusters), an empty one.
 */
export async function createPostgresDatabase(
  serverUrl: string = postgresServerUrl(),
  options: FreshDatabaseOptions = {},
): Promise<string> {
  const template = !options.empty && serverUrl === postgresServerUrl() ? inject('postgresTemplate') : undefined;
  const name = `broker_test_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The backends database tests run on: PGlite always, and PostgreSQL when the run has a
 * server (global setup decides; under CI=true it must).
 */
export function testBackends(): TestBackend[] {
  const backends: TestBackend[] = [
    {
      name: 'pglite',
      storage: (options) => Promise.resolve({ backend: 'pglite', pglite: pgliteStorage(undefined, options) }),
    },
  ];
  if (postgresServerUrl()) {
    backends.push({
      name: 'postgres',
      storage: async (options) => ({
        backend: 'postgres',
        postgres: { connection_url: await createPostgresDatabase(undefined, options) },
      }),
    });
  }
  return backends;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    /** The template database `createPostgresDatabase` copies ('' when none). */
    postgresTemplate: string;
    /** The migrated PGlite dump fresh PGlite test databases load ('' when none). */
    pgliteDump: string;
  }
}
