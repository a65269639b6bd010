/**
 * Webhooks: signed deliveries of ledger events to admin-configured
 * endpoints from a durable outbox (Standard Webhooks headers, retries with back-off and
 * jitter, the SSRF-safe outbound client), and the secrets they are signed with.
 */
export { WebhooksModule } from './webhooks.module';
export { WebhookDeliveryWorker, POLL_INTERVAL_MS, type DeliveryTotals } from './webhook-delivery.worker';
export { WebhookDeliveryRetention } from './webhook-delivery-retention';
export { WebhookSecrets, type IssuedWebhookSecret } from './webhook-secrets';
export { signWebhook, formatSecret, SECRET_PREFIX } from './webhook-signature';
export { webhookUrlProblem } from './webhook-url';
export { retryDelayMs, nextAttemptAt, FIRST_RETRY_MS, MAX_RETRY_MS } from './retry-schedule';
