import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tool approvals (docs/approvals.md).
 *
 * - `arguments`, `metadata` and `params_pattern` are JSON *text*, not jsonb: jsonb refuses
 *   `\u0000` and lone surrogates and reorders keys, and a gateway's arguments must come back
 *   exactly as reviewed (never a 500 because a tool argument held an odd character).
 * - A duplicate pending request is decided by the partial unique index
 *   `approvals_pending_request_uq`, never by check-then-insert.
 * - `listed` says whether the record is part of the gateways' sync state; time-based exits
 *   (an expired pending, a one-time denial after its window) are made by a conditional
 *   UPDATE, so the sync body is a function of the database state at its version.
 * - `approval_sync_version` is the sync ETag counter. Statement-level triggers bump it in
 *   the same transaction as every change of `approvals` (cascades from an agent deletion
 *   included) and `pg_notify('approvals_changed', <version>)`, delivered at commit to the
 *   LISTEN connection of every replica (PGlite: its in-process listen()). A statement that
 *   changes no row bumps nothing.
 */
export class ToolApprovals1763835000000 implements MigrationInterface {
  name = 'ToolApprovals1763835000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE approval_sync_version (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        version   bigint  NOT NULL
      )`);
    await queryRunner.query('INSERT INTO approval_sync_version (singleton, version) VALUES (true, 0)');
    await queryRunner.query(`
      CREATE TABLE approvals (
        id               uuid         PRIMARY KEY,
        principal        varchar(200) NOT NULL,
        agent_id         uuid         NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        tool_name        varchar(255) NOT NULL,
        arguments        text         NOT NULL,
        arguments_hash   char(64)     NOT NULL,
        metadata         text         NOT NULL,
        risk_level       varchar(8)   NULL CHECK (risk_level IN ('low', 'medium', 'critical')),
        agent_session_id varchar(255) NULL,
        status           varchar(8)   NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'revoked', 'expired')),
        persistence      varchar(9)   NULL CHECK (persistence IN ('once', 'session', 'permanent')),
        params_pattern   text         NULL,
        consumed         boolean      NOT NULL DEFAULT false,
        listed           boolean      NOT NULL DEFAULT true,
        created_at       timestamptz  NOT NULL,
        expires_at       timestamptz  NULL,
        approved_at      timestamptz  NULL,
        denied_at        timestamptz  NULL,
        consumed_at      timestamptz  NULL,
        revoked_at       timestamptz  NULL
      )`);
    await queryRunner.query(
      "CREATE UNIQUE INDEX approvals_pending_request_uq ON approvals (principal, agent_id, tool_name, arguments_hash) WHERE status = 'pending'",
    );
    await queryRunner.query('CREATE INDEX approvals_pair_created_idx ON approvals (principal, agent_id, created_at)');
    await queryRunner.query('CREATE INDEX approvals_principal_created_idx ON approvals (principal, created_at)');
    await queryRunner.query('CREATE INDEX approvals_listed_idx ON approvals (principal, agent_id) WHERE listed');
    await queryRunner.query(
      'CREATE INDEX approvals_listed_expiry_idx ON approvals (expires_at) WHERE listed AND expires_at IS NOT NULL',
    );
    await queryRunner.query(`
      CREATE FUNCTION approvals_bump_sync_version() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        next_version bigint;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM changed_rows) THEN
          RETURN NULL;
        END IF;
        UPDATE approval_sync_version SET version = version + 1 RETURNING version INTO next_version;
        PERFORM pg_notify('approvals_changed', next_version::text);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(
      'CREATE TRIGGER approvals_inserted AFTER INSERT ON approvals REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_bump_sync_version()',
    );
    await queryRunner.query(
      'CREATE TRIGGER approvals_updated AFTER UPDATE ON approvals REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_bump_sync_version()',
    );
    await queryRunner.query(
      'CREATE TRIGGER approvals_deleted AFTER DELETE ON approvals REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_bump_sync_version()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE approvals');
    await queryRunner.query('DROP FUNCTION approvals_bump_sync_version()');
    await queryRunner.query('DROP TABLE approval_sync_version');
  }
}
