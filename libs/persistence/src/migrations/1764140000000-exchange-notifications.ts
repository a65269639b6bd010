import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows that carry the principal: a change notifies that principal. */
const PRINCIPAL_TABLES = ['grants', 'third_party_sessions'];
/** Rows of services: a change notifies everyone (empty payload). */
const SERVICE_TABLES = ['services', 'service_protected_resources'];

/**
 * Every committed change to what the token exchange reads sends `NOTIFY exchange_changed`,
 * so each replica drops what it keeps in memory for it (`ExchangeContextCache`): the
 * principal of a changed grant, delegation or session as payload (row triggers;
 * PostgreSQL folds identical notifications of one transaction into one), an empty payload
 * for a service or protected-resource change (statement triggers). Delivered at commit.
 */
export class ExchangeNotifications1764140000000 implements MigrationInterface {
  name = 'ExchangeNotifications1764140000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION exchange_notify_principal() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('exchange_changed', OLD.principal); END IF;
        IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('exchange_changed', NEW.principal); END IF;
        RETURN NULL;
      END
      $$`);
    // A delegation names its grant; when the grant is gone (a cascade), the grant's own trigger notified.
    await queryRunner.query(`
      CREATE FUNCTION exchange_notify_delegation() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        owner text;
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          SELECT principal INTO owner FROM grants WHERE id = OLD.grant_id;
          IF owner IS NOT NULL THEN PERFORM pg_notify('exchange_changed', owner); END IF;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          SELECT principal INTO owner FROM grants WHERE id = NEW.grant_id;
          IF owner IS NOT NULL THEN PERFORM pg_notify('exchange_changed', owner); END IF;
        END IF;
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION exchange_notify_all() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('exchange_changed', '');
        RETURN NULL;
      END
      $$`);
    for (const table of PRINCIPAL_TABLES) {
      await queryRunner.query(
        `CREATE TRIGGER ${table}_exchange_changed AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION exchange_notify_principal()`,
      );
    }
    await queryRunner.query(
      'CREATE TRIGGER grant_delegations_exchange_changed AFTER INSERT OR UPDATE OR DELETE ON grant_delegations FOR EACH ROW EXECUTE FUNCTION exchange_notify_delegation()',
    );
    for (const table of SERVICE_TABLES) {
      await queryRunner.query(
        `CREATE TRIGGER ${table}_exchange_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION exchange_notify_all()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [...PRINCIPAL_TABLES, 'grant_delegations', ...SERVICE_TABLES])
      await queryRunner.query(`DROP TRIGGER ${table}_exchange_changed ON ${table}`);
    for (const fn of ['exchange_notify_principal', 'exchange_notify_delegation', 'exchange_notify_all'])
      await queryRunner.query(`DROP FUNCTION ${fn}()`);
  }
}
