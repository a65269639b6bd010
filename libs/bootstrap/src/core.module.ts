import { BROKER_CONFIG, SERVER_KIND, type ServerKind } from '@broker/config';
import { Clock, ComponentHealth, Random } from '@broker/domain';
import { Lifecycle } from '@broker/http';
import { PersistenceModule } from '@broker/persistence';
import { BrokerMetrics, Tracing } from '@broker/telemetry';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { HealthModule } from './health/health.module';
import type { BrokerRuntime } from './runtime';

/**
 * The shared base of both applications: the runtime's config, clock, randomness,
 * lifecycle, telemetry and database as providers, request logging, and `/health`.
 */
@Global()
@Module({})
export class CoreModule {
  /** The base module of one server (`server`) of the process `runtime` describes. */
  static forRuntime(runtime: BrokerRuntime, server: ServerKind): DynamicModule {
    const providers = [
      { provide: BROKER_CONFIG, useValue: runtime.config },
      { provide: SERVER_KIND, useValue: server },
      { provide: Clock, useValue: runtime.clock },
      { provide: Random, useValue: runtime.random },
      { provide: Lifecycle, useValue: runtime.lifecycle },
      { provide: ComponentHealth, useValue: new ComponentHealth() },
      { provide: BrokerMetrics, useValue: runtime.telemetry.metrics },
      { provide: Tracing, useValue: runtime.telemetry.tracing },
    ];
    return {
      module: CoreModule,
      imports: [
        // The access-log middleware is installed by configureApp at its place in the pipeline (right after the
        // trace start); nestjs-pino only binds the request's logger it created (`useExisting`).
        LoggerModule.forRoot({ pinoHttp: { logger: runtime.logger.child({ server }) }, useExisting: true }),
        PersistenceModule.forDatabase(runtime.database),
        HealthModule,
      ],
      providers,
      exports: [
        BROKER_CONFIG,
        SERVER_KIND,
        Clock,
        Random,
        Lifecycle,
        ComponentHealth,
        BrokerMetrics,
        Tracing,
        PersistenceModule,
        HealthModule,
      ],
    };
  }
}
