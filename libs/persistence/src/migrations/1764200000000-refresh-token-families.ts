import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per refresh token family (docs/oauth2.md "Token lifecycle"): the row that the
 * rotation and every end of a family lock, so that they are serialised on it. Without it,
 * an end of the family (RFC 7009 revocation, reuse detection, a grant narrowed or revoked)
 * racing a rotation could miss the successor the rotation was inserting: under READ
 * COMMITTED the ending UPDATE's snapshot does not contain a row inserted by a transaction
 * that commits after it started. The rotation takes the family row FOR NO KEY UPDATE before
 * anything else and requires it unrevoked; an end first marks the family row revoked (waiting
 * for a rotation in flight to commit), then, in a later statement of its transaction (a new
 * snapshot), revokes every token of the family, the successor included.
 *
 * `resource_keys` holds the family's resources in normal form (`normaliseResourceUri`, how
 * services store their protected resources), index for index, so the rotation can check in
 * SQL that the grant still delegates each of them. Existing families are backfilled with
 * trailing slashes removed, the part of the normal form SQL can redo exactly.
 *
 * No foreign key from `refresh_tokens`: its check would be paid by every rotation, and the
 * family row is always written in the statement that writes the family's first token.
 */
export class RefreshTokenFamilies1764200000000 implements MigrationInterface {
  name = 'RefreshTokenFamilies1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE refresh_token_families (
        id                 uuid         PRIMARY KEY,
        resource_keys      jsonb        NOT NULL DEFAULT '[]',
        family_expires_at  timestamptz  NOT NULL,
        revoked_at         timestamptz
      )`);
    await queryRunner.query(`
      INSERT INTO refresh_token_families (id, resource_keys, family_expires_at, revoked_at)
      SELECT t.family_id,
             (SELECT coalesce(jsonb_agg(regexp_replace(u.uri, '/+$', '') ORDER BY u.i), '[]'::jsonb)
                FROM jsonb_array_elements_text((array_agg(t.resources))[1]) WITH ORDINALITY AS u(uri, i)),
             max(t.family_expires_at),
             min(t.revoked_at)
        FROM refresh_tokens t
       GROUP BY t.family_id`);
    await queryRunner.query(
      'CREATE INDEX refresh_token_families_expires_idx ON refresh_token_families (family_expires_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE refresh_token_families');
  }
}
