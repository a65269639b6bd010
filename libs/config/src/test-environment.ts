/** What the test harness reads from the environment (only this lib reads `process.env`). */
export interface TestEnvironment {
  /** `TEST_DATABASE_URL`: an existing PostgreSQL server for the database tests. */
  readonly databaseUrl: string | undefined;
  /** `CI=true`: a missing PostgreSQL is then a failure, not a skip. */
  readonly ci: boolean;
}

export function readTestEnvironment(env: NodeJS.ProcessEnv = process.env): TestEnvironment {
  return { databaseUrl: env.TEST_DATABASE_URL || undefined, ci: env.CI === 'true' };
}
