import type { ServerKind } from '@broker/config';
import type { Clock } from '@broker/domain';
import { startServers, type RunningBroker, type ServerDefinition } from '@broker/bootstrap';
import { LogCapture } from './log-capture';
import { registerContractServer } from './openapi-contract';
import { testConfig } from './test-config';

export interface TestBroker {
  readonly broker: RunningBroker;
  readonly logs: LogCapture;
  /** Base URL of a server, e.g. `url('enduser')` → `http://127.0.0.1:41234`. */
  url(kind: ServerKind): string;
  stop(): Promise<void>;
}

export interface TestBrokerOptions {
  readonly servers: readonly ServerDefinition[];
  readonly config?: Record<string, unknown>;
  readonly clock?: Clock;
}

/**
 * Starts real servers in-process through the same `startServers` as `main.ts`, on
 * ephemeral loopback ports, with the log captured.
 */
export async function startTestBroker(options: TestBrokerOptions): Promise<TestBroker> {
  const logs = new LogCapture();
  const broker = await startServers(options.servers, {
    config: testConfig(options.config),
    logDestination: logs,
    clock: options.clock,
  });
  for (const definition of options.servers) registerContractServer(broker.server(definition.kind).url, definition.kind);
  return {
    broker,
    logs,
    url: (kind) => broker.server(kind).url,
    stop: () => broker.shutdown(),
  };
}
