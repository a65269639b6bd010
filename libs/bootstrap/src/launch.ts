import { CONFIG_ERROR_EXIT_CODE, ConfigError, loadConfig, type LoadedConfig } from '@broker/config';
import type { Logger } from 'pino';
import { startServers, StartupError, type RunningBroker, type ServerDefinition } from './start-servers';

/**
 * The process entry point of `npm start` and the standalone apps: loads the config
 * (exit 2 on a config error, with one line naming the key), starts the servers (exit 1
 * if one cannot bind, both stopped), and on SIGTERM/SIGINT shuts down gracefully and
 * exits 0. With `server.workers` > 1 (PostgreSQL only) this process becomes the
 * primary of a `node:cluster` and each forked worker runs the servers (libs/bootstrap/src/cluster).
 */
export async function runMain(definitions: readonly ServerDefinition[]): Promise<void> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(CONFIG_ERROR_EXIT_CODE);
    }
    throw error;
  }
  // One worker is today's single process, and the cluster code is not even loaded.
  if (loaded.config.server.workers > 1) {
    const { runClusterRole } = await import('./cluster/run-cluster');
    return runClusterRole(definitions, loaded);
  }
  return runSingleProcess(definitions, loaded);
}

/** The servers in this one process, with its signals and exit codes. */
async function runSingleProcess(definitions: readonly ServerDefinition[], loaded: LoadedConfig): Promise<void> {
  let broker: RunningBroker;
  try {
    broker = await startServers(definitions, { config: loaded.config, warnings: loaded.warnings });
  } catch (error) {
    const message =
      error instanceof StartupError || error instanceof ConfigError
        ? error.message
        : `start-up failed: ${(error as Error).message}`;
    process.stderr.write(`${message}\n`);
    process.exit(error instanceof ConfigError ? CONFIG_ERROR_EXIT_CODE : 1);
  }
  const logger: Logger = broker.runtime.logger;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting immediately');
      process.exit(1);
    }
    logger.info({ signal }, 'signal received');
    broker.shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
