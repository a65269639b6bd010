/** What the test harness reads from the environment (only this lib reads `process.env`). */
export interface TestEnvironment {
  /** `TEST_DATABASE_URL`: an existing PostgreSQL server for the database tests. */
  readonly databaseUrl: string | undefined;
  /** `CI=true`: a missing PostgreSQL is then a failure, not a skip. */
  readonly ci: boolean;
  /** `CHROMIUM_PATH`: the Chromium the console's browser tests drive (default Debian's /usr/bin/chromium). */
  readonly chromiumPath: string;
}

export function readTestEnvironment(env: NodeJS.ProcessEnv = process.env): TestEnvironment {
  return {
    databaseUrl: env.TEST_DATABASE_URL || undefined,
    ci: env.CI === 'true',
    chromiumPath: env.CHROMIUM_PATH || '/usr/bin/chromium',
  };
}
