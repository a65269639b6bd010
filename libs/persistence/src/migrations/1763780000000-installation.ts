import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The installation record: one row identifying this broker deployment (its id is
 * logged at start-up and lets operators tell databases apart). Runs on PostgreSQL 15.
 */
export class Installation1763780000000 implements MigrationInterface {
  name = 'Installation1763780000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE broker_installation (
        singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
        id         uuid        NOT NULL DEFAULT gen_random_uuid(),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE broker_installation');
  }
}
