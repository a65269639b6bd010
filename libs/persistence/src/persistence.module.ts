import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, Random } from '@broker/domain';
import { EventLedger, EventRetention } from '@broker/events';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { APPROVAL_PROVIDERS, APPROVAL_TOKENS } from './approvals/approval.providers';
import { Database } from './database';
import { EventRepository } from './events/event.repository';
import { REPOSITORY_PROVIDERS, REPOSITORY_TOKENS } from './registry/registry.providers';
import { RefreshTokenRetention } from './registry/refresh-token-retention';
import { RevokedAccessTokenRetention } from './registry/revoked-access-token-retention';
import { DpopProofReplayRetention } from './registry/dpop-proof-replay-retention';

/**
 * Provides the process's `Database` and the repositories to one Nest application. The
 * database is opened by the launcher (once per process, shared by both servers) and
 * handed in here.
 */
@Global()
@Module({})
export class PersistenceModule {
  static forDatabase(database: Database): DynamicModule {
    return {
      module: PersistenceModule,
      providers: [
        { provide: Database, useValue: database },
        ...REPOSITORY_PROVIDERS,
        ...APPROVAL_PROVIDERS,
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
        ...REPOSITORY_TOKENS,
        ...APPROVAL_TOKENS,
        EventLedger,
        EventRetention,
        RevokedAccessTokenRetention,
        DpopProofReplayRetention,
        RefreshTokenRetention,
      ],
    };
  }
}
