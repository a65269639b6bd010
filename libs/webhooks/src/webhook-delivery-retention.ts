import { BROKER_CONFIG, SERVER_KIND, type BrokerConfig, type ServerKind } from '@broker/config';
import { Clock } from '@broker/domain';
import { RetentionJob, WebhookDeliveryRepository } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';

/**
 * Deletes delivered and failed webhook deliveries of events older than
 * `events.webhooks.delivery_retention` (README "Webhooks"), as every `RetentionJob` does:
 * hourly, in batches, only in the end-user server's instance. Pending deliveries are never
 * purged.
 */
@Injectable()
export class WebhookDeliveryRetention extends RetentionJob {
  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(SERVER_KIND) server: ServerKind,
    deliveries: WebhookDeliveryRepository,
    clock: Clock,
  ) {
    super(
      {
        retentionMs: config.events.webhooks.delivery_retention,
        runs: server === 'enduser',
        purgeBatch: (cutoff, batch) => deliveries.purgeFinishedBefore(cutoff, batch),
        what: 'old deliveries',
        topic: 'webhooks',
      },
      clock,
      WebhookDeliveryRetention.name,
    );
  }
}
