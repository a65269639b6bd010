import type { BrokerConfig } from '@broker/config';
import type { Clock, Random } from '@broker/domain';
import type { Lifecycle } from '@broker/http';
import type { Database } from '@broker/persistence';
import type { Telemetry } from '@broker/telemetry';
import type { Logger } from 'pino';

/**
 * What one process shares among its servers: config, root logger, the open database,
 * the lifecycle, and the injected clock and randomness.
 */
export interface BrokerRuntime {
  readonly config: BrokerConfig;
  readonly logger: Logger;
  readonly database: Database;
  readonly lifecycle: Lifecycle;
  readonly clock: Clock;
  readonly random: Random;
  readonly telemetry: Telemetry;
}
