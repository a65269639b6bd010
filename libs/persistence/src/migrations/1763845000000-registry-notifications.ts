import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['agents', 'agent_permission_sets', 'agent_client_credentials'];

/**
 * Every committed change to a token-endpoint client (agent, its assignments, its secret
 * digest) sends `NOTIFY registry_changed`, so each replica clears its client cache at once
 * (statement-level triggers: one notification per statement, delivered at commit).
 */
export class RegistryNotifications1763845000000 implements MigrationInterface {
  name = 'RegistryNotifications1763845000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION registry_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('registry_changed', TG_TABLE_NAME);
        RETURN NULL;
      END
      $$`);
    for (const table of TABLES) {
      await queryRunner.query(
        `CREATE TRIGGER ${table}_registry_changed AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION registry_notify_change()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of TABLES) await queryRunner.query(`DROP TRIGGER ${table}_registry_changed ON ${table}`);
    await queryRunner.query('DROP FUNCTION registry_notify_change()');
  }
}
