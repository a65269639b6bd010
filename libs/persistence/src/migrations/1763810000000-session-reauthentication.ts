import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A session whose refresh token the provider refused (`invalid_grant`) needs the user to reconnect. */
export class SessionReauthentication1763810000000 implements MigrationInterface {
  name = 'SessionReauthentication1763810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE third_party_sessions ADD COLUMN needs_reauthentication boolean NOT NULL DEFAULT false',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE third_party_sessions DROP COLUMN needs_reauthentication');
  }
}
