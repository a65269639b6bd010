import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, RetentionJob } from '@broker/domain';
import { WebhookDeliveryRepository } from '@broker/persistence';
import { Inject, Injectable, Logger } from '@nestjs/common';

/**
 * Deletes delivered and failed webhook deliveries of events older than
 * `events.webhooks.delivery_retention` (README "Webhooks"), as every `RetentionJob` does:
 * hourly, in batches, run by the end-user server. Pending deliveries are never
 * purged.
 */
@Injectable()
export class WebhookDeliveryRetention extends RetentionJob {
  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, deliveries: WebhookDeliveryRepository, clock: Clock) {
    super(
      {
        retentionMs: config.events.webhooks.delivery_retention,
        purgeBatch: (cutoff, batch) => deliveries.purgeFinishedBefore(cutoff, batch),
        what: 'old deliveries',
        topic: 'webhooks',
      },
      clock,
      WebhookDeliveryRetention.name,
      new Logger(WebhookDeliveryRetention.name),
    );
  }
}
