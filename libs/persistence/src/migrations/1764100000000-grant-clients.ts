import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The clients a person consented to for a grant: a Client ID Metadata Document URL (the
 * `client_id` of the authorization request) and the host of the redirect URI the consent page
 * showed. A code for a document client needs the grant and a row for its URL and redirect
 * host written no earlier than the grant was (re)created; the rows go with the grant. An
 * authorization code remembers the document URL it was issued to (`client_id_url`, null for
 * the agent's own UUID `client_id`), so only that client redeems it (RFC 6749 §4.1.3).
 */
export class GrantClients1764100000000 implements MigrationInterface {
  name = 'GrantClients1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE grant_clients (
        grant_id      uuid         NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
        client_id_url text         NOT NULL,
        redirect_host varchar(255) NOT NULL,
        consented_at  timestamptz  NOT NULL,
        PRIMARY KEY (grant_id, client_id_url, redirect_host)
      )`);
    await queryRunner.query('ALTER TABLE authorization_codes ADD COLUMN client_id_url text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE authorization_codes DROP COLUMN client_id_url');
    await queryRunner.query('DROP TABLE grant_clients');
  }
}
