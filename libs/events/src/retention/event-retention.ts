import type { BrokerConfig } from '@broker/config';
import { RetentionJob, type Clock } from '@broker/domain';
import { Logger } from '@nestjs/common';
import type { EventPurge } from '../recording/event-store';

/**
 * Deletes events older than `events.retention` (docs/events.md), as every
 * `RetentionJob` does: hourly, in batches (the events table's `purgeBefore`), run by the
 * end-user server. Provided by the persistence module, which hands it the table.
 */
export class EventRetention extends RetentionJob {
  constructor(config: Pick<BrokerConfig, 'events'>, events: EventPurge, clock: Clock) {
    super(
      {
        retentionMs: config.events.retention,
        purgeBatch: (cutoff, batch) => events.purgeBefore(cutoff, batch),
        what: 'old events',
        topic: 'event retention',
      },
      clock,
      EventRetention.name,
      new Logger(EventRetention.name),
    );
  }
}
