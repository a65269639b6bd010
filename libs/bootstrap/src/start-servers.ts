import type { AddressInfo } from 'node:net';
import { redactConfig, type BrokerConfig, type ServerKind } from '@broker/config';
import { type Clock, CryptoRandom, type Random, SystemClock } from '@broker/domain';
import {
  adminConsoleUrl,
  BrokerExpressAdapter,
  configureApp,
  createLogger,
  Lifecycle,
  type HttpRuntime,
} from '@broker/http';
import { Database, runCountingQueries } from '@broker/persistence';
import { createTelemetry } from '@broker/telemetry';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import type { BrokerRuntime } from './runtime';

/** One server of the process: which kind, and its root module for a runtime. */
export interface ServerDefinition {
  readonly name: string;
  readonly kind: ServerKind;
  readonly module: (runtime: BrokerRuntime) => DynamicModule;
}

/** How `startServers` runs: the loaded config and, for tests, where logs go and which clock and randomness to use. */
export interface StartOptions {
  readonly config: BrokerConfig;
  readonly warnings?: readonly string[];
  /** Where log lines go (default stdout); tests capture them here. */
  readonly logDestination?: DestinationStream;
  readonly clock?: Clock;
  readonly random?: Random;
  /** Fields every log line carries (a cluster worker's pid and worker id). */
  readonly logBindings?: Record<string, unknown>;
}

/** A started server. */
export interface RunningServer {
  readonly name: string;
  readonly kind: ServerKind;
  readonly app: NestExpressApplication;
  /** `http://host:port` it listens on (the real port when configured as 0). */
  readonly url: string;
}

/** The servers of one process and how to stop them. */
export interface RunningBroker {
  readonly runtime: BrokerRuntime;
  readonly servers: readonly RunningServer[];
  server(kind: ServerKind): RunningServer;
  /** Graceful stop: new requests get 503, in-flight ones drain (bounded by `server.shutdown.timeout`). */
  shutdown(): Promise<void>;
}

/** Start-up failed in a way the operator must fix; the message says how. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

function describeListenError(error: unknown, definition: ServerDefinition, bind: string, port: number): string {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${bind}:${port}`;
  if (code === 'EADDRINUSE')
    return `cannot start the ${definition.name} server: ${where} is already in use (stop the other process or change server.${definition.kind}.port)`;
  if (code === 'EACCES')
    return `cannot start the ${definition.name} server: no permission to listen on ${where} (use a port above 1023 or change server.${definition.kind}.port)`;
  if (code === 'EADDRNOTAVAIL')
    return `cannot start the ${definition.name} server: ${bind} is not an address of this machine (change server.${definition.kind}.bind)`;
  return `cannot start the ${definition.name} server on ${where}: ${(error as Error).message}`;
}

/**
 * Opens the database once, builds and configures every server on one shared runtime,
 * and listens. If any server cannot listen, all are closed and a `StartupError` says
 * why. Used by `main.ts` and by the end-to-end tests alike.
 */
export async function startServers(
  definitions: readonly ServerDefinition[],
  options: StartOptions,
): Promise<RunningBroker> {
  const { config } = options;
  const rootLogger = createLogger(config, options.logDestination);
  const logger = options.logBindings === undefined ? rootLogger : rootLogger.child(options.logBindings);
  for (const warning of options.warnings ?? []) logger.warn(warning);
  logger.info({ config: redactConfig(config) }, 'configuration loaded');

  const clock = options.clock ?? new SystemClock();
  const lifecycle = new Lifecycle(clock);
  const telemetry = await createTelemetry(config);
  const database = await Database.open(config, logger);
  database.instrument(telemetry.metrics);
  const installation = await database.installation();
  logger.info({ installation_id: installation.id, storage: config.storage.backend }, 'database ready');
  const runtime: BrokerRuntime = {
    config,
    logger,
    database,
    lifecycle,
    clock,
    random: options.random ?? new CryptoRandom(),
    telemetry,
  };

  // Bound once at boot (hot path rule): http's pipeline counts statements through persistence without importing it.
  const pipeline: HttpRuntime = {
    config,
    logger,
    lifecycle,
    random: runtime.random,
    countQueries: runCountingQueries,
    telemetry,
  };

  const servers: RunningServer[] = [];
  const apps: NestExpressApplication[] = [];
  try {
    for (const definition of definitions) {
      const app = await NestFactory.create<NestExpressApplication>(
        definition.module(runtime),
        new BrokerExpressAdapter(),
        {
          bodyParser: false,
          bufferLogs: true,
          abortOnError: false,
          forceCloseConnections: true,
        },
      );
      apps.push(app);
      configureApp(app, pipeline, definition.kind);
    }
    for (const [index, definition] of definitions.entries()) {
      const app = apps[index] as NestExpressApplication;
      const { port, bind } = config.server[definition.kind];
      try {
        await app.listen(port, bind);
      } catch (error) {
        throw new StartupError(describeListenError(error, definition, bind, port));
      }
      const address = app.getHttpServer().address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      servers.push({ name: definition.name, kind: definition.kind, app, url: `http://${host}:${address.port}` });
      logger.info(
        { server: definition.kind, url: `http://${host}:${address.port}` },
        `${definition.name} server listening`,
      );
      // Where an administrator opens the admin console: the admin server's public_url (docs/admin-console.md).
      const consoleUrl = definition.kind === 'admin' ? adminConsoleUrl(config) : undefined;
      if (consoleUrl !== undefined) logger.info({ server: 'admin', url: consoleUrl }, `admin console at ${consoleUrl}`);
    }
  } catch (error) {
    await Promise.allSettled(apps.map((app) => app.close()));
    await database.close();
    await telemetry.tracing.shutdown();
    throw error;
  }
  lifecycle.markRunning();

  let stopping: Promise<void> | undefined;
  return {
    runtime,
    servers,
    server(kind) {
      const found = servers.find((s) => s.kind === kind);
      if (found === undefined) throw new Error(`no ${kind} server in this process`);
      return found;
    },
    shutdown() {
      stopping ??= (async () => {
        lifecycle.beginShutdown();
        logger.info({ in_flight: lifecycle.inFlightRequests }, 'shutting down: draining in-flight requests');
        const drained = await lifecycle.waitForIdle(config.server.shutdown.timeout);
        if (!drained)
          logger.warn(
            { in_flight: lifecycle.inFlightRequests },
            'shutdown timeout reached: closing remaining connections',
          );
        await Promise.allSettled(apps.map((app) => app.close()));
        await database.close();
        await telemetry.tracing.shutdown();
        logger.info('shutdown complete');
      })();
      return stopping;
    },
  };
}
