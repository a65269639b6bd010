import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Proactive refresh: a session's claim lease, so replicas and workers
 * sweeping one database share the due sessions instead of all taking the same ones (a
 * claim is not a write of the session: it does not bump `version`), and a partial index
 * on the expiry of the sessions a sweep may refresh (a refresh token, not marked for
 * re-authentication), so a sweep reads only the due end of that index.
 */
export class SessionRefreshClaim1763895000000 implements MigrationInterface {
  name = 'SessionRefreshClaim1763895000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE third_party_sessions ADD COLUMN refresh_claimed_until timestamptz');
    await queryRunner.query(
      'CREATE INDEX third_party_sessions_refresh_due_idx ON third_party_sessions (access_token_expires_at) WHERE refresh_token_envelope IS NOT NULL AND needs_reauthentication = false',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX third_party_sessions_refresh_due_idx');
    await queryRunner.query('ALTER TABLE third_party_sessions DROP COLUMN refresh_claimed_until');
  }
}
