import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A backchannel authentication request (OpenID CIBA Core 1.0, poll mode; docs/ciba.md) is a
 * tool approval: the same row, the same console page, the same remembered decisions and limits.
 *
 * - `ciba_request_sha256`: SHA-256 of the `auth_req_id` (never stored itself); unique.
 * - `ciba_requester`: who asked and must poll: `agent` (its own secret) or `gateway:<sub>`.
 * - `binding_message`, `authorization_details` (the canonical JSON of the one RFC 9396 entry, as
 *   the token will carry it) and `scopes` (space-separated) are what the request said.
 * - `ciba_interval_ms` / `ciba_last_poll_at`: the poll interval (grown by each `slow_down`) and
 *   the last in-time poll, so one conditional statement enforces it across replicas.
 * - `ciba_expires_at`: when the `auth_req_id` expires (`expires_at` is rewritten by decisions).
 * - `ciba_token_issued_at`: the token was issued (single use of the `auth_req_id`).
 *
 * Each `auth_req_id` is its own request, so the pending-duplicate index no longer covers these rows.
 * A poll writes only the poll columns (and the issuance `ciba_token_issued_at`): the update
 * trigger now bumps the sync version only when a row changed in what the gateways' sync or a
 * person's decision sees, so polling wakes no long-poller on any replica.
 */
export class CibaApprovals1764240000000 implements MigrationInterface {
  name = 'CibaApprovals1764240000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE approvals
        ADD COLUMN ciba_request_sha256  bytea        NULL,
        ADD COLUMN ciba_requester       varchar(200) NULL,
        ADD COLUMN binding_message      varchar(100) NULL,
        ADD COLUMN authorization_details text        NULL,
        ADD COLUMN scopes               text         NULL,
        ADD COLUMN ciba_interval_ms     integer      NULL,
        ADD COLUMN ciba_last_poll_at    timestamptz  NULL,
        ADD COLUMN ciba_expires_at      timestamptz  NULL,
        ADD COLUMN ciba_token_issued_at timestamptz  NULL`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX approvals_ciba_request_uq ON approvals (ciba_request_sha256) WHERE ciba_request_sha256 IS NOT NULL',
    );
    await queryRunner.query('DROP INDEX approvals_pending_request_uq');
    await queryRunner.query(
      "CREATE UNIQUE INDEX approvals_pending_request_uq ON approvals (principal, agent_id, tool_name, arguments_hash) WHERE status = 'pending' AND ciba_request_sha256 IS NULL",
    );
    await queryRunner.query(`
      CREATE FUNCTION approvals_bump_sync_version_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        next_version bigint;
      BEGIN
        IF NOT EXISTS (
          SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
           WHERE (n.status, n.persistence, n.params_pattern, n.consumed, n.listed, n.expires_at,
                  n.approved_at, n.denied_at, n.consumed_at, n.revoked_at)
                 IS DISTINCT FROM
                 (o.status, o.persistence, o.params_pattern, o.consumed, o.listed, o.expires_at,
                  o.approved_at, o.denied_at, o.consumed_at, o.revoked_at)
        ) THEN
          RETURN NULL;
        END IF;
        UPDATE approval_sync_version SET version = version + 1 RETURNING version INTO next_version;
        PERFORM pg_notify('approvals_changed', next_version::text);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query('DROP TRIGGER approvals_updated ON approvals');
    await queryRunner.query(
      'CREATE TRIGGER approvals_updated AFTER UPDATE ON approvals REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_bump_sync_version_on_update()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER approvals_updated ON approvals');
    await queryRunner.query(
      'CREATE TRIGGER approvals_updated AFTER UPDATE ON approvals REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_bump_sync_version()',
    );
    await queryRunner.query('DROP FUNCTION approvals_bump_sync_version_on_update()');
    await queryRunner.query('DELETE FROM approvals WHERE ciba_request_sha256 IS NOT NULL');
    await queryRunner.query('DROP INDEX approvals_pending_request_uq');
    await queryRunner.query(
      "CREATE UNIQUE INDEX approvals_pending_request_uq ON approvals (principal, agent_id, tool_name, arguments_hash) WHERE status = 'pending'",
    );
    await queryRunner.query('DROP INDEX approvals_ciba_request_uq');
    await queryRunner.query(`
      ALTER TABLE approvals
        DROP COLUMN ciba_request_sha256, DROP COLUMN ciba_requester, DROP COLUMN binding_message,
        DROP COLUMN authorization_details, DROP COLUMN scopes, DROP COLUMN ciba_interval_ms,
        DROP COLUMN ciba_last_poll_at, DROP COLUMN ciba_expires_at, DROP COLUMN ciba_token_issued_at`);
  }
}
