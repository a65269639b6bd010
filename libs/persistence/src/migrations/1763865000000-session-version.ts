import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session row's version, bumped by every write (reconnect, refresh, re-authentication
 * mark). A refresh writes back only if the row is still the version it read, so a
 * reconnect that lands while the provider answers is never overwritten.
 */
export class SessionVersion1763865000000 implements MigrationInterface {
  name = 'SessionVersion1763865000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE third_party_sessions ADD COLUMN version integer NOT NULL DEFAULT 1');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE third_party_sessions DROP COLUMN version');
  }
}
