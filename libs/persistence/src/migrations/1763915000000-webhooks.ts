import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoints and their durable outbox. `webhooks` holds what an
 * admin configured (the signing secret sealed by the vault's envelope cipher, bound to the
 * webhook's id); `webhook_deliveries` is the outbox: one row per (webhook, event), written
 * in the event's own transaction (`EventRepository.append`), so a committed event always
 * has its deliveries. Workers claim due rows with `FOR UPDATE SKIP LOCKED`, and the claim's
 * lease is `next_attempt_at` itself (the partial index covers exactly the claimable rows).
 * No foreign key to `events`: the payload is the event as delivered, so retention may
 * purge the ledger while a delivery is still retried.
 */
export class Webhooks1763915000000 implements MigrationInterface {
  name = 'Webhooks1763915000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        url text NOT NULL,
        event_types text[] NOT NULL,
        secret_envelope bytea NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id uuid NOT NULL,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        last_status integer,
        last_error text,
        created_at timestamptz NOT NULL,
        delivered_at timestamptz,
        UNIQUE (webhook_id, event_id)
      )`);
    // The claim: pending rows by due time, nothing else.
    await queryRunner.query(
      "CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    );
    // The admin's list of a webhook's deliveries, newest first.
    await queryRunner.query(
      'CREATE INDEX webhook_deliveries_webhook_created_idx ON webhook_deliveries (webhook_id, created_at DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE webhook_deliveries');
    await queryRunner.query('DROP TABLE webhooks');
  }
}
