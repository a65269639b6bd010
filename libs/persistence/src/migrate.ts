import 'reflect-metadata';
import { CONFIG_ERROR_EXIT_CODE, ConfigError, loadConfig } from '@broker/config';
import pino from 'pino';
import { Database } from './database';

/**
 * `npm run migrate [-- --config FILE] [-- --revert-all]`: applies pending migrations to
 * the configured database (or reverts them all), then exits.
 */
async function main(): Promise<number> {
  const { config } = loadConfig();
  const logger = pino({ level: 'info', base: { service: 'agent-identity-broker', component: 'migrate' } });
  const database = await Database.open(config, logger, { runMigrations: false });
  try {
    if (process.argv.includes('--revert-all')) {
      logger.info(`reverted ${await database.revertAll()} migration(s)`);
    } else {
      const applied = await database.migrate();
      logger.info(applied.length === 0 ? 'database is up to date' : `applied: ${applied.join(', ')}`);
    }
    return 0;
  } finally {
    await database.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : `migration failed: ${(error as Error).message}`}\n`,
    );
    process.exit(error instanceof ConfigError ? CONFIG_ERROR_EXIT_CODE : 1);
  },
);
