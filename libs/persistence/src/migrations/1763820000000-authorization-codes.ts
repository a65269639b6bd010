import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Authorization codes of the broker's own authorization server: stored only as their
 * SHA-256 digest, bound to client, redirect_uri, PKCE challenge, principal and scope,
 * redeemed by one DELETE ... RETURNING, so two concurrent redemptions cannot both win.
 */
export class AuthorizationCodes1763820000000 implements MigrationInterface {
  name = 'AuthorizationCodes1763820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE authorization_codes (
        code_sha256    bytea        PRIMARY KEY,
        agent_id       uuid         NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        principal      varchar(200) NOT NULL,
        redirect_uri   text         NOT NULL,
        code_challenge varchar(128) NOT NULL,
        scopes         jsonb        NOT NULL,
        expires_at     timestamptz  NOT NULL,
        created_at     timestamptz  NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX authorization_codes_expires_idx ON authorization_codes (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE authorization_codes');
  }
}
