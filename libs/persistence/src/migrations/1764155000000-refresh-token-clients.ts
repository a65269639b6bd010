import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A refresh token issued to a Client ID Metadata Document client names that document URL:
 * the family is bound to the client that redeemed the code (RFC 6749 §6), and an agent's
 * own client_id (null here) cannot refresh a document client's token, nor the reverse.
 */
export class RefreshTokenClients1764155000000 implements MigrationInterface {
  name = 'RefreshTokenClients1764155000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE refresh_tokens ADD COLUMN client_id_url text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE refresh_tokens DROP COLUMN client_id_url');
  }
}
