import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access tokens revoked by their client (RFC 7009): the `jti`, kept until the token's own
 * `exp` (then purged by `RevokedAccessTokenRetention`). Every committed revocation, of an
 * access token or of a refresh token family (by its client, or on reuse), sends
 * `NOTIFY token_revoked` (`jti:<uuid>` or `family:<uuid>`), so each replica drops what its
 * introspection keeps in memory for it (`TokenStateCache`). Delivered at commit;
 * identical notifications of one transaction are folded into one.
 */
export class TokenRevocation1764160000000 implements MigrationInterface {
  name = 'TokenRevocation1764160000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE revoked_access_tokens (
        jti         uuid        PRIMARY KEY,
        expires_at  timestamptz NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX revoked_access_tokens_expires_at_idx ON revoked_access_tokens (expires_at)');
    await queryRunner.query(`
      CREATE FUNCTION token_revoked_notify_jti() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('token_revoked', 'jti:' || NEW.jti::text);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION token_revoked_notify_family() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('token_revoked', 'family:' || NEW.family_id::text);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(
      'CREATE TRIGGER revoked_access_tokens_token_revoked AFTER INSERT ON revoked_access_tokens FOR EACH ROW EXECUTE FUNCTION token_revoked_notify_jti()',
    );
    await queryRunner.query(
      'CREATE TRIGGER refresh_tokens_token_revoked AFTER UPDATE OF revoked_at ON refresh_tokens FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL) EXECUTE FUNCTION token_revoked_notify_family()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER refresh_tokens_token_revoked ON refresh_tokens');
    await queryRunner.query('DROP TABLE revoked_access_tokens');
    await queryRunner.query('DROP FUNCTION token_revoked_notify_family()');
    await queryRunner.query('DROP FUNCTION token_revoked_notify_jti()');
  }
}
