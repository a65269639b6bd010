import cluster from 'node:cluster';
import { CONFIG_ERROR_EXIT_CODE, ConfigError, type LoadedConfig } from '@broker/config';
import { joinClusterMetrics } from '@broker/telemetry';
import { startServers, StartupError, type RunningBroker, type ServerDefinition } from '../start-servers';
import type { WorkerMessage } from './worker-messages';

function tellPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) resolve();
    else process.send(message, undefined, undefined, () => resolve());
  });
}

/**
 * One cluster worker. It runs both servers exactly as a single process
 * does (its own database pool, LISTEN connection and caches; the ports are shared through
 * the primary, which hands connections round-robin). Every log line carries its pid and
 * worker id. A start-up failure is reported to the primary, which decides what to do.
 * SIGTERM, SIGINT or losing the primary all start the same graceful shutdown, once: a
 * Ctrl-C reaches the worker both from the terminal and forwarded by the primary, and the
 * primary alone owns "a second signal exits at once".
 */
export async function runWorker(definitions: readonly ServerDefinition[], loaded: LoadedConfig): Promise<void> {
  const workerId = cluster.worker?.id ?? 0;
  let broker: RunningBroker;
  try {
    broker = await startServers(definitions, {
      config: loaded.config,
      warnings: loaded.warnings,
      logBindings: { pid: process.pid, worker: workerId },
    });
  } catch (error) {
    const message =
      error instanceof StartupError || error instanceof ConfigError
        ? error.message
        : `start-up failed: ${(error as Error).message}`;
    await tellPrimary({
      type: 'broker:worker-failed',
      message,
      exitCode: error instanceof ConfigError ? CONFIG_ERROR_EXIT_CODE : 1,
    });
    process.exit(error instanceof ConfigError ? CONFIG_ERROR_EXIT_CODE : 1);
  }
  // Before answering the primary: its scrapes collect this worker's registry, not prom-client's global one.
  joinClusterMetrics(broker.runtime.telemetry.metrics.registry);
  const logger = broker.runtime.logger;
  logger.info({ urls: broker.servers.map((s) => s.url) }, 'worker started');
  await tellPrimary({ type: 'broker:worker-ready' });

  let stopping = false;
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'worker stopping');
    broker.shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The primary is gone (killed): do not linger as an orphan holding connections.
  process.on('disconnect', () => stop('primary process gone'));
}
