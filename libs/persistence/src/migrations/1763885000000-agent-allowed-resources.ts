import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 8707: the resources an agent may ask tokens for (exact URIs or prefixes ending in `/`),
 * a JSON array; empty (every existing agent) means no per-agent restriction.
 */
export class AgentAllowedResources1763885000000 implements MigrationInterface {
  name = 'AgentAllowedResources1763885000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE agents ADD COLUMN allowed_resources jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agents DROP COLUMN allowed_resources');
  }
}
