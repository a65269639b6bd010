import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The answers of authorization sessions (the consent links of `/oauth2/authorize`): an
 * authorization session is answered once (Allow, Deny, or an error sent to the client), so
 * a consent link opened again never yields a second code or a second redirect (README
 * "Security"). Keyed by the session token's `jti`; claimed by one INSERT ... ON CONFLICT DO
 * NOTHING, so two answers racing on any replicas have one winner. A row is kept until its
 * session token can no longer be accepted; the index on `expires_at` lets each claim remove
 * a few rows past that.
 */
export class AuthorizationSessionAnswers1764110000000 implements MigrationInterface {
  name = 'AuthorizationSessionAnswers1764110000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE authorization_session_answers (
        session_id  uuid        PRIMARY KEY,
        principal   text        NOT NULL,
        agent_id    uuid        NOT NULL,
        decision    varchar(16) NOT NULL CHECK (decision IN ('allowed', 'denied', 'error')),
        answered_at timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL
      )`);
    await queryRunner.query(
      'CREATE INDEX authorization_session_answers_expires_idx ON authorization_session_answers (expires_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE authorization_session_answers');
  }
}
