import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Refresh tokens of the local authorization server (RFC 6749 §6, OAuth 2.1 §4.3): stored as
 * the SHA-256 of the opaque value, never the value. Each token belongs to a family (the
 * chain of rotations from one authorization code); a token is current until rotated, and a
 * family ends at its absolute expiry or when revoked. Bound to the client (agent), the
 * person and the grant: deleting the agent or the grant deletes its tokens.
 */
export class RefreshTokens1764150000000 implements MigrationInterface {
  name = 'RefreshTokens1764150000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE refresh_tokens (
        id                 uuid         PRIMARY KEY,
        family_id          uuid         NOT NULL,
        token_sha256       bytea        NOT NULL,
        agent_id           uuid         NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        principal          varchar(200) NOT NULL,
        grant_id           uuid         NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
        resources          jsonb        NOT NULL DEFAULT '[]',
        scopes             jsonb        NOT NULL DEFAULT '[]',
        credential_sha256  bytea,
        issued_at          timestamptz  NOT NULL,
        idle_expires_at    timestamptz  NOT NULL,
        family_expires_at  timestamptz  NOT NULL,
        rotated_at         timestamptz,
        revoked_at         timestamptz,
        CONSTRAINT refresh_tokens_token_sha256_key UNIQUE (token_sha256)
      )`);
    await queryRunner.query('CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id)');
    await queryRunner.query('CREATE INDEX refresh_tokens_grant_idx ON refresh_tokens (grant_id)');
    await queryRunner.query('CREATE INDEX refresh_tokens_principal_agent_idx ON refresh_tokens (principal, agent_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE refresh_tokens');
  }
}
