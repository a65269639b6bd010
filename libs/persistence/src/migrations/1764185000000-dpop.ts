import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * DPoP (RFC 9449, docs/oauth2.md "DPoP"):
 * - `dpop_proof_replays`: the SHA-256 of each accepted proof's key thumbprint and `jti` until the proof could no
 *   longer be accepted (§11.1), claimed by one INSERT ... ON CONFLICT so two replicas presented the same proof
 *   cannot both accept it; shaped as `client_assertion_replays`, with the same purge on the way;
 * - `authorization_codes.dpop_jkt`: the key thumbprint an authorization request bound its code to (§10);
 * - `refresh_tokens.dpop_jkt`: the key a public client's refresh token family is bound to (§5), copied to each
 *   successor.
 */
export class Dpop1764185000000 implements MigrationInterface {
  name = 'Dpop1764185000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE dpop_proof_replays (
        jti_sha256 bytea       PRIMARY KEY,
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX dpop_proof_replays_expires_idx ON dpop_proof_replays (expires_at)');
    await queryRunner.query('ALTER TABLE authorization_codes ADD COLUMN dpop_jkt text NULL');
    await queryRunner.query('ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt text NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE refresh_tokens DROP COLUMN dpop_jkt');
    await queryRunner.query('ALTER TABLE authorization_codes DROP COLUMN dpop_jkt');
    await queryRunner.query('DROP TABLE dpop_proof_replays');
  }
}
