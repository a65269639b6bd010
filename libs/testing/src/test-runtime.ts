import { parseConfig } from '@broker/config';
import type { BrokerRuntime } from '@broker/bootstrap';
import { type Clock, CryptoRandom, SystemClock } from '@broker/domain';
import { createLogger, Lifecycle } from '@broker/http';
import { Database } from '@broker/persistence';
import { createTelemetry } from '@broker/telemetry';
import { LogCapture } from './log-capture';
import { mergeConfigTrees, testConfigTree } from './test-config';

type Tree = Record<string, unknown>;

/** A runtime without servers, for `Test.createTestingModule` over an application's module. */
export interface TestRuntime {
  /** Built as `startServers` builds it: config, root logger, open database, lifecycle, clock, randomness, telemetry. */
  readonly runtime: BrokerRuntime;
  /** The runtime's log lines. */
  readonly logs: LogCapture;
  /**
   * The same runtime (database, clock, lifecycle, telemetry) under the config with `overrides`
   * merged over the one it was opened with (another mode, an upstream, an enterprise IdP).
   */
  withConfig(overrides: Tree): BrokerRuntime;
  /** Closes the database and the telemetry: after every module compiled over the runtime is closed. */
  close(): Promise<void>;
}

/**
 * Opens the runtime of a process that starts no server: a fresh PGlite database with every
 * migration applied (`testConfigTree`'s), the log captured, `clock` or the system clock.
 */
export async function openTestRuntime(options: { config?: Tree; clock?: Clock } = {}): Promise<TestRuntime> {
  const tree = testConfigTree(options.config);
  const config = parseConfig(tree, {}).config;
  const logs = new LogCapture();
  const logger = createLogger(config, logs);
  const clock = options.clock ?? new SystemClock();
  const telemetry = await createTelemetry(config);
  const database = await Database.open(config, logger);
  const runtime: BrokerRuntime = {
    config,
    logger,
    database,
    lifecycle: new Lifecycle(clock),
    clock,
    random: new CryptoRandom(),
    telemetry,
  };
  return {
    runtime,
    logs,
    withConfig: (overrides) => ({ ...runtime, config: parseConfig(mergeConfigTrees(tree, overrides), {}).config }),
    close: async () => {
      await database.close();
      await telemetry.tracing.shutdown();
    },
  };
}
