import { BROKER_CONFIG, SERVER_KIND, type BrokerConfig, type ServerKind } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { RetentionJob } from '../retention-job';
import { EventRepository } from './event.repository';

/**
 * Deletes events older than `events.retention` (README "Activity and events"), as every
 * `RetentionJob` does: hourly, in batches (`EventRepository.purgeBefore`), only in the
 * end-user server's instance.
 */
@Injectable()
export class EventRetention extends RetentionJob {
  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(SERVER_KIND) server: ServerKind,
    events: EventRepository,
    clock: Clock,
  ) {
    super(
      {
        retentionMs: config.events.retention,
        runs: server === 'enduser',
        purgeBatch: (cutoff, batch) => events.purgeBefore(cutoff, batch),
        what: 'old events',
        topic: 'event retention',
      },
      clock,
      EventRetention.name,
    );
  }
}
