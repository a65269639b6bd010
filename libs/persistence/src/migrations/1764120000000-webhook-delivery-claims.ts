import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries claimed per webhook (README "Webhooks"). `claimed_until` is the lease of
 * an attempt in flight, apart from `next_attempt_at` (when the row is due): a claim counts the
 * rows of a webhook leased right now, so no receiver holds more than
 * `events.webhooks.per_webhook_concurrency` attempts across every process, and a lease starts
 * when its attempt starts. Indexes: a webhook's due rows in order (the claim, per webhook), a
 * webhook's leased rows (few: a finished attempt clears its lease), and finished rows by age
 * (`events.webhooks.delivery_retention`). The old global due index is no longer read.
 */
export class WebhookDeliveryClaims1764120000000 implements MigrationInterface {
  name = 'WebhookDeliveryClaims1764120000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_deliveries ADD COLUMN claimed_until timestamptz');
    await queryRunner.query(
      "CREATE INDEX webhook_deliveries_webhook_due_idx ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending'",
    );
    await queryRunner.query(
      'CREATE INDEX webhook_deliveries_claimed_idx ON webhook_deliveries (webhook_id) WHERE claimed_until IS NOT NULL',
    );
    await queryRunner.query(
      "CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (created_at) WHERE status <> 'pending'",
    );
    await queryRunner.query('DROP INDEX webhook_deliveries_due_idx');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      "CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    );
    await queryRunner.query('DROP INDEX webhook_deliveries_finished_idx');
    await queryRunner.query('DROP INDEX webhook_deliveries_claimed_idx');
    await queryRunner.query('DROP INDEX webhook_deliveries_webhook_due_idx');
    await queryRunner.query('ALTER TABLE webhook_deliveries DROP COLUMN claimed_until');
  }
}
