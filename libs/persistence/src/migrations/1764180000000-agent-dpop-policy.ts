import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 9449 §5.2 `dpop_bound_access_tokens` per agent: true (a DPoP proof on every token
 * request), false (optional), NULL (every existing agent: the server default,
 * `oauth2_authorization_server.local.dpop.required`).
 */
export class AgentDpopPolicy1764180000000 implements MigrationInterface {
  name = 'AgentDpopPolicy1764180000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agents ADD COLUMN dpop_bound_access_tokens boolean NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agents DROP COLUMN dpop_bound_access_tokens');
  }
}
