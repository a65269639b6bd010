import { VaultModule } from '@broker/vault';
import { Module } from '@nestjs/common';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookSecrets } from './webhook-secrets';

/**
 * Issue 17 item 5: webhook secrets (sealed by the vault) and the outbox's delivery worker.
 * Both servers import it (the admin API issues secrets); only the end-user server's worker
 * delivers.
 */
@Module({ imports: [VaultModule], providers: [WebhookSecrets, WebhookDeliveryWorker], exports: [WebhookSecrets, WebhookDeliveryWorker] })
export class WebhooksModule {}
