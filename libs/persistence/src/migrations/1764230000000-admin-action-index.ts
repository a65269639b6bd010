import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The administrators' own actions, newest first, for the admin overview's "recent admin
 * actions" (docs/admin-api.md "Overview"): without it, finding the ten newest events whose
 * actor is an administrator walks the ledger backwards through every token exchange since.
 * Partial, so only the registry's writes (rare) insert into it, never the hot path's events.
 */
export class AdminActionIndex1764230000000 implements MigrationInterface {
  name = 'AdminActionIndex1764230000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("CREATE INDEX events_admin_actor_seq_idx ON events (seq DESC) WHERE actor_type = 'admin'");
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX events_admin_actor_seq_idx');
  }
}
