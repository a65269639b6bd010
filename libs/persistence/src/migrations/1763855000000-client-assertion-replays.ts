import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 7523 §3 replay record of the gateway's client assertions
 * (`token_exchange.client_assertion.single_use`): the SHA-256 of each accepted `jti` until
 * its assertion can no longer be accepted. Claimed by one INSERT ... ON CONFLICT, so two
 * replicas presented the same assertion at once cannot both accept it; the index on
 * `expires_at` lets each claim remove a few records that outlived their assertion.
 */
export class ClientAssertionReplays1763855000000 implements MigrationInterface {
  name = 'ClientAssertionReplays1763855000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE client_assertion_replays (
        jti_sha256 bytea       PRIMARY KEY,
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query(
      'CREATE INDEX client_assertion_replays_expires_idx ON client_assertion_replays (expires_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE client_assertion_replays');
  }
}
