import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { RetentionJob } from '../retention-job';
import { EventRepository } from './event.repository';

/**
 * Deletes events older than `events.retention` (README "Activity and events"), as every
 * `RetentionJob` does: hourly, in batches (`EventRepository.purgeBefore`), run by the
 * end-user server.
 */
@Injectable()
export class EventRetention extends RetentionJob {
  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, events: EventRepository, clock: Clock) {
    super(
      {
        retentionMs: config.events.retention,
        purgeBatch: (cutoff, batch) => events.purgeBefore(cutoff, batch),
        what: 'old events',
        topic: 'event retention',
      },
      clock,
      EventRetention.name,
    );
  }
}
