import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 8707: the resources an authorization code was issued for (the `resource` parameters of
 * the authorization request), a JSON array; empty for a request without any.
 */
export class AuthorizationCodeResources1763875000000 implements MigrationInterface {
  name = 'AuthorizationCodeResources1763875000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE authorization_codes ADD COLUMN resources jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE authorization_codes DROP COLUMN resources');
  }
}
