import 'reflect-metadata';
import { CONFIG_ERROR_EXIT_CODE, ConfigError, loadConfig } from '@broker/config';
import { Database, EnvelopeStore } from '@broker/persistence';
import pino from 'pino';
import { EnvelopeCipher } from './envelope-cipher';
import { rewrapAll } from './rewrap';

/**
 * `npm run vault:rewrap [-- --config FILE]`: re-wraps every stored data key under
 * `encryption.current_key_id`, online, in batches, reporting progress; run it after
 * moving current_key_id and before removing an old key from `encryption.keys`.
 */
async function main(): Promise<void> {
  const { config } = loadConfig();
  const logger = pino({ level: 'info', base: { service: 'agent-identity-broker', component: 'vault-rewrap' } });
  const database = await Database.open(config, logger);
  try {
    const cipher = new EnvelopeCipher(config);
    logger.info(
      { current_key_id: config.encryption.current_key_id },
      'rewrapping every stored data key under the current key-encryption key',
    );
    const totals = await rewrapAll(new EnvelopeStore(database.dataSource), cipher, (progress) =>
      logger.info(progress, `${progress.column}: ${progress.scanned} scanned, ${progress.rewrapped} rewrapped`),
    );
    logger.info({ totals }, `done: ${totals.reduce((n, t) => n + t.rewrapped, 0)} data keys rewrapped`);
  } finally {
    await database.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : `rewrap failed: ${(error as Error).message}`}\n`,
    );
    process.exit(error instanceof ConfigError ? CONFIG_ERROR_EXIT_CODE : 1);
  },
);
