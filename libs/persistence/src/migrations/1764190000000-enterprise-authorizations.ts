import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Enterprise-managed authorization (Identity Assertion JWT Authorization Grants, docs/oauth2.md
 * "Enterprise-managed authorization"): what the person's organisation allowed an agent, with no
 * consent grant behind it. One live row per (person, agent, trusted issuer, resource), upserted
 * by every token the grant issues (its tokens carry the row's id as `sid`); revoking the row ends
 * them, and a later token starts a new row. The revocation sends `NOTIFY token_revoked`
 * (`family:<id>`, as a refresh token family's) so each replica forgets what its introspection
 * keeps in memory for those tokens.
 */
export class EnterpriseAuthorizations1764190000000 implements MigrationInterface {
  name = 'EnterpriseAuthorizations1764190000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE enterprise_authorizations (
        id              uuid         PRIMARY KEY,
        principal       varchar(200) NOT NULL,
        agent_id        uuid         NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        issuer          text         NOT NULL,
        resource_uri    text         NOT NULL,
        scopes          jsonb        NOT NULL,
        first_issued_at timestamptz  NOT NULL,
        last_issued_at  timestamptz  NOT NULL,
        expires_at      timestamptz  NOT NULL,
        revoked_at      timestamptz  NULL,
        revoked_by      varchar(200) NULL
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX enterprise_authorizations_live_idx ON enterprise_authorizations (principal, agent_id, issuer, resource_uri) WHERE revoked_at IS NULL',
    );
    await queryRunner.query(
      'CREATE INDEX enterprise_authorizations_revoked_idx ON enterprise_authorizations (principal, agent_id, issuer, resource_uri, revoked_at) WHERE revoked_at IS NOT NULL',
    );
    await queryRunner.query('CREATE INDEX enterprise_authorizations_agent_idx ON enterprise_authorizations (agent_id)');
    await queryRunner.query(
      'CREATE INDEX enterprise_authorizations_expires_idx ON enterprise_authorizations (expires_at)',
    );
    await queryRunner.query(`
      CREATE FUNCTION enterprise_authorization_revoked_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('token_revoked', 'family:' || NEW.id::text);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(
      'CREATE TRIGGER enterprise_authorizations_token_revoked AFTER UPDATE OF revoked_at ON enterprise_authorizations FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL) EXECUTE FUNCTION enterprise_authorization_revoked_notify()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE enterprise_authorizations');
    await queryRunner.query('DROP FUNCTION enterprise_authorization_revoked_notify()');
  }
}
