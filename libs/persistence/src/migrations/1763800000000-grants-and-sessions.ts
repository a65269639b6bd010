import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Grants (one per principal and agent, with the permission sets and services they
 * delegate and a snapshot of the consented scopes) and third-party sessions (one per
 * principal and service, tokens sealed by the vault). The token-exchange hot path reads
 * both by their unique keys.
 */
export class GrantsAndSessions1763800000000 implements MigrationInterface {
  name = 'GrantsAndSessions1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE grants (
        id          uuid         PRIMARY KEY,
        principal   varchar(200) NOT NULL,
        agent_id    uuid         NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        valid_until timestamptz,
        created_at  timestamptz  NOT NULL,
        updated_at  timestamptz  NOT NULL,
        CONSTRAINT grants_principal_agent_key UNIQUE (principal, agent_id)
      )`);
    await queryRunner.query('CREATE INDEX grants_agent_idx ON grants (agent_id)');
    await queryRunner.query(`
      CREATE TABLE grant_delegations (
        grant_id          uuid    NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
        permission_set_id uuid    NOT NULL REFERENCES permission_sets (id) ON DELETE RESTRICT,
        service_id        uuid    NOT NULL REFERENCES services (id) ON DELETE RESTRICT,
        scopes            jsonb   NOT NULL,
        position          integer NOT NULL,
        PRIMARY KEY (grant_id, permission_set_id, service_id)
      )`);
    await queryRunner.query('CREATE INDEX grant_delegations_service_idx ON grant_delegations (service_id)');
    await queryRunner.query(
      'CREATE INDEX grant_delegations_permission_set_idx ON grant_delegations (permission_set_id)',
    );
    await queryRunner.query(`
      CREATE TABLE third_party_sessions (
        id                       uuid         PRIMARY KEY,
        principal                varchar(200) NOT NULL,
        service_id               uuid         NOT NULL REFERENCES services (id) ON DELETE CASCADE,
        access_token_envelope    bytea        NOT NULL,
        refresh_token_envelope   bytea,
        token_type               varchar(64)  NOT NULL,
        scopes                   jsonb        NOT NULL DEFAULT '[]',
        access_token_expires_at  timestamptz,
        refresh_token_expires_at timestamptz,
        initiated_at             timestamptz  NOT NULL,
        updated_at               timestamptz  NOT NULL,
        CONSTRAINT third_party_sessions_principal_service_key UNIQUE (principal, service_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['third_party_sessions', 'grant_delegations', 'grants'])
      await queryRunner.query(`DROP TABLE ${table}`);
  }
}
