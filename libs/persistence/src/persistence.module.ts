import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, Random } from '@broker/domain';
import { EventLedger, EventRetention } from '@broker/events';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APPROVAL_PROVIDERS, APPROVAL_TOKENS } from './approvals/approval.providers';
import { AuthorizationRequestRepository } from './authorization-requests/authorization-request.repository';
import { Database } from './database';
import { ENTITIES } from './entities';
import { EventRepository } from './events/event.repository';
import { processProviders, REPOSITORIES } from './registry/registry.providers';
import { RefreshTokenRetention } from './registry/refresh-token-retention';
import { RevokedAccessTokenRetention } from './registry/revoked-access-token-retention';
import { DpopProofReplayRetention } from './registry/dpop-proof-replay-retention';
import { Transactions } from './transactions';

/**
 * Provides the process's `Database` and the repositories to one Nest application. The
 * database is opened by the launcher (once per process, shared by both servers, migrated
 * before any application exists) and handed in here: `TypeOrmModule` provides its data
 * source (`@InjectDataSource()`, `@InjectRepository(Entity)`) instead of opening one of its
 * own, and returns only its hold on it when the application shuts down (`SharedDataSource`).
 */
@Global()
@Module({})
export class PersistenceModule {
  static forDatabase(database: Database): DynamicModule {
    return {
      module: PersistenceModule,
      imports: [
        TypeOrmModule.forRootAsync({
          // The options the data source was opened with (what `TypeOrmModule` reads: no entity autoloading).
          // No retry: lending an open data source either works at once or the database is closed.
          useFactory: () => ({ ...database.dataSource.options, retryAttempts: 0, toRetry: () => false }),
          dataSourceFactory: () => Promise.resolve(database.dataSource.lend()),
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: [
        { provide: Database, useValue: database },
        ...processProviders(database),
        // The repositories' writes: one transaction each, with work after their commit.
        Transactions,
        ...REPOSITORIES,
        ...APPROVAL_PROVIDERS,
        AuthorizationRequestRepository,
        // The process's one ledger writer (the database's), stamping with the runtime's clock and randomness.
        {
          provide: EventLedger,
          useFactory: (clock: Clock, random: Random) => database.events.use(clock, random),
          inject: [Clock, Random],
        },
        // The ledger's retention, purging the events table.
        {
          provide: EventRetention,
          useFactory: (config: BrokerConfig, events: EventRepository, clock: Clock) =>
            new EventRetention(config, events, clock),
          inject: [BROKER_CONFIG, EventRepository, Clock],
        },
        RevokedAccessTokenRetention,
        DpopProofReplayRetention,
        RefreshTokenRetention,
      ],
      exports: [
        Database,
        ...REPOSITORIES,
        ...APPROVAL_TOKENS,
        AuthorizationRequestRepository,
        EventLedger,
        EventRetention,
        RevokedAccessTokenRetention,
        DpopProofReplayRetention,
        RefreshTokenRetention,
      ],
    };
  }
}
