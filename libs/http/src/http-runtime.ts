import type { BrokerConfig } from '@broker/config';
import type { Random } from '@broker/domain';
import type { Telemetry } from '@broker/telemetry';
import type { Logger } from 'pino';
import type { Lifecycle } from './lifecycle/lifecycle';
import type { CountQueries } from './logging/query-count.middleware';

/**
 * What one server's request pipeline takes from its process (`configureApp`): the config,
 * the root logger, the shared lifecycle, randomness for trace ids, and the database
 * statement counter as a function, so that http never imports the database (the process's
 * bootstrap owns it).
 */
export interface HttpRuntime {
  readonly config: BrokerConfig;
  readonly logger: Logger;
  readonly lifecycle: Lifecycle;
  readonly random: Random;
  /** Persistence's `runCountingQueries`, bound once at boot; both entrances count through it. */
  readonly countQueries: CountQueries;
  /** The process's metrics and tracing, created once at boot. */
  readonly telemetry: Telemetry;
}
