import cluster from 'node:cluster';
import type { LoadedConfig } from '@broker/config';
import type { ServerDefinition } from '../start-servers';
import { runPrimary } from './run-primary';
import { runWorker } from './run-worker';

/**
 * `server.workers` > 1. The process `npm start` launched is the primary;
 * the processes it forks run the same entry point and land here as workers.
 */
export async function runClusterRole(definitions: readonly ServerDefinition[], loaded: LoadedConfig): Promise<void> {
  if (cluster.isPrimary) runPrimary(loaded.config);
  else await runWorker(definitions, loaded);
}
