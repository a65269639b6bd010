import { VaultModule } from '@broker/vault';
import { Module } from '@nestjs/common';
import { WebhookDeliveryRetention } from './webhook-delivery-retention';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookSecrets } from './webhook-secrets';

/**
 * Webhook secrets (sealed by the vault), the outbox's delivery worker and
 * its retention. Both servers import it (the admin API issues secrets); only the end-user
 * server's worker delivers and purges.
 */
@Module({
  imports: [VaultModule],
  providers: [WebhookSecrets, WebhookDeliveryWorker, WebhookDeliveryRetention],
  exports: [WebhookSecrets, WebhookDeliveryWorker, WebhookDeliveryRetention],
})
export class WebhooksModule {}
