import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every refresh inserts a token (its successor), so each index and foreign key of
 * `refresh_tokens` is paid per refresh. Two were redundant:
 * - the foreign key to `agents`: a token's grant belongs to the same agent, and deleting the
 *   agent deletes its grants and, through `grant_id`, their tokens. Its check also locked the
 *   agent's row (FOR KEY SHARE) in every refresh, so all of one agent's concurrent refreshes
 *   met there.
 * - the (principal, agent_id) index: live sign-ins are counted from the person's grants
 *   (indexed by principal) through `grant_id`.
 */
export class RefreshTokenWritePath1764165000000 implements MigrationInterface {
  name = 'RefreshTokenWritePath1764165000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE refresh_tokens DROP CONSTRAINT refresh_tokens_agent_id_fkey');
    await queryRunner.query('DROP INDEX refresh_tokens_principal_agent_idx');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX refresh_tokens_principal_agent_idx ON refresh_tokens (principal, agent_id)');
    await queryRunner.query(
      'ALTER TABLE refresh_tokens ADD CONSTRAINT refresh_tokens_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents (id) ON DELETE CASCADE',
    );
  }
}
