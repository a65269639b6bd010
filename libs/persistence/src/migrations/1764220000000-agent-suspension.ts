import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An agent suspended by an administrator (docs/admin-api.md "Suspending an agent"): when, by
 * whom and why; all NULL while it is not. Nothing else is touched by suspending, so resuming
 * (the three columns back to NULL) restores exactly what was there.
 *
 * The token exchange reads the flag with its grant and session (`ExchangeLookup`) and keeps
 * it in `ExchangeContextCache`, which listens on `exchange_changed`: a change of
 * `suspended_at` notifies everyone there (empty payload), as a service change does. The
 * token endpoint's clients (`ClientCache`) are cleared by the agents table's
 * `registry_changed` trigger already.
 */
export class AgentSuspension1764220000000 implements MigrationInterface {
  name = 'AgentSuspension1764220000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE agents
      ADD COLUMN suspended_at timestamptz NULL,
      ADD COLUMN suspended_by text NULL,
      ADD COLUMN suspension_reason varchar(500) NULL,
      ADD CONSTRAINT agents_suspension_complete CHECK ((suspended_at IS NULL) = (suspended_by IS NULL))`);
    await queryRunner.query(
      'CREATE TRIGGER agents_exchange_changed AFTER UPDATE OF suspended_at ON agents FOR EACH STATEMENT EXECUTE FUNCTION exchange_notify_all()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER agents_exchange_changed ON agents');
    await queryRunner.query(`ALTER TABLE agents
      DROP CONSTRAINT agents_suspension_complete,
      DROP COLUMN suspension_reason,
      DROP COLUMN suspended_by,
      DROP COLUMN suspended_at`);
  }
}
