import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The activity ledger, one append-only table of business events (never a
 * credential: see libs/events `event-catalogue.ts`). `seq` orders it (the pagination cursor:
 * stable while new events arrive, newest first); a trigger refuses every UPDATE, so a
 * recorded event cannot be changed; DELETE is left to retention (`occurred_at` index).
 * Few indexes, because the token exchange's events are written at the exchange's rate:
 * the person's pages (`principal, seq`), time ranges and retention (`occurred_at`), and
 * the primary key; `id` is a random UUID (unique by construction) and a kind filter scans
 * newest first, so neither has an index of its own.
 */
export class EventLedger1763905000000 implements MigrationInterface {
  name = 'EventLedger1763905000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE events (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id uuid NOT NULL,
        type text NOT NULL,
        occurred_at timestamptz NOT NULL,
        actor_type text NOT NULL,
        actor_id text,
        principal text,
        agent_id uuid,
        service_id uuid,
        outcome text NOT NULL,
        trace_id text,
        details jsonb NOT NULL DEFAULT '{}'::jsonb
      )`);
    await queryRunner.query(
      'CREATE INDEX events_principal_seq_idx ON events (principal, seq DESC) WHERE principal IS NOT NULL',
    );
    await queryRunner.query('CREATE INDEX events_occurred_at_idx ON events (occurred_at)');
    await queryRunner.query(`
      CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'events are append-only: % refused', TG_OP;
      END $$`);
    await queryRunner.query(
      'CREATE TRIGGER events_no_update BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE events');
    await queryRunner.query('DROP FUNCTION events_append_only()');
  }
}
