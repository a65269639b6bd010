import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { inject } from 'vitest';

/** A database backend a database test runs on. */
export interface TestBackend {
  readonly name: 'pglite' | 'postgres';
  /** A fresh, empty database's storage config. */
  storage(): Promise<Record<string, unknown>>;
}

/** The PostgreSQL server of this test run ('' when only PGlite runs). */
export function postgresServerUrl(): string {
  return inject('postgresUrl');
}

/** Creates an empty database on the test PostgreSQL server and returns its URL. */
export async function createPostgresDatabase(serverUrl: string = postgresServerUrl()): Promise<string> {
  const name = `broker_test_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
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
    { name: 'pglite', storage: () => Promise.resolve({ backend: 'pglite', pglite: { data_dir: `memory://${randomBytes(6).toString('hex')}` } }) },
  ];
  if (postgresServerUrl()) {
    backends.push({ name: 'postgres', storage: async () => ({ backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } }) });
  }
  return backends;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}
