import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin registry: agents, services (with their protected resources), permission
 * sets, agent client credentials and signing keys. PostgreSQL 15 SQL.
 * Uniqueness that matters under concurrency lives in the schema, not in
 * check-then-insert code: a protected-resource URI belongs to one service (primary
 * key), one current signing key (partial unique index), one credential per agent.
 */
export class AdminRegistry1763790000000 implements MigrationInterface {
  name = 'AdminRegistry1763790000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE permission_sets (
        id          uuid         PRIMARY KEY,
        name        varchar(255) NOT NULL,
        description text         NOT NULL DEFAULT '',
        created_at  timestamptz  NOT NULL DEFAULT now(),
        updated_at  timestamptz  NOT NULL DEFAULT now(),
        CONSTRAINT permission_sets_name_key UNIQUE (name)
      )`);
    await queryRunner.query(`
      CREATE TABLE agents (
        id                     uuid         PRIMARY KEY,
        display_name           varchar(255) NOT NULL,
        description            text,
        canonical_id           varchar(128),
        client_id              text,
        logo_url               text,
        governance_url         text,
        user_documentation_url text,
        agent_interface_url    text,
        redirect_uris          jsonb        NOT NULL DEFAULT '[]',
        allowed_scopes         jsonb        NOT NULL DEFAULT '[]',
        client_uris            jsonb        NOT NULL DEFAULT '[]',
        created_at             timestamptz  NOT NULL DEFAULT now(),
        updated_at             timestamptz  NOT NULL DEFAULT now(),
        CONSTRAINT agents_canonical_id_key UNIQUE (canonical_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE agent_permission_sets (
        agent_id          uuid        NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        permission_set_id uuid        NOT NULL REFERENCES permission_sets (id) ON DELETE RESTRICT,
        requirement_type  varchar(32) NOT NULL CHECK (requirement_type IN ('mandatory', 'optional', 'require_all_scopes')),
        position          integer     NOT NULL,
        PRIMARY KEY (agent_id, permission_set_id)
      )`);
    await queryRunner.query(
      'CREATE INDEX agent_permission_sets_permission_set_idx ON agent_permission_sets (permission_set_id)',
    );
    await queryRunner.query(`
      CREATE TABLE services (
        id                         uuid         PRIMARY KEY,
        display_name               varchar(255) NOT NULL,
        description                text,
        logo_url                   text,
        client_id                  text         NOT NULL,
        client_secret_envelope     bytea,
        token_endpoint_auth_method varchar(32)  NOT NULL CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'none')),
        issuer_uri                 text         NOT NULL,
        authorization_endpoint     text         NOT NULL,
        token_endpoint             text         NOT NULL,
        scopes                     jsonb        NOT NULL DEFAULT '[]',
        created_at                 timestamptz  NOT NULL DEFAULT now(),
        updated_at                 timestamptz  NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE service_protected_resources (
        uri        text    PRIMARY KEY,
        service_id uuid    NOT NULL REFERENCES services (id) ON DELETE CASCADE,
        position   integer NOT NULL
      )`);
    await queryRunner.query(
      'CREATE INDEX service_protected_resources_service_idx ON service_protected_resources (service_id)',
    );
    await queryRunner.query(`
      CREATE TABLE permission_set_service_scopes (
        permission_set_id uuid        NOT NULL REFERENCES permission_sets (id) ON DELETE CASCADE,
        service_id        uuid        NOT NULL REFERENCES services (id) ON DELETE RESTRICT,
        scopes            jsonb       NOT NULL,
        requirement_type  varchar(32) NOT NULL CHECK (requirement_type IN ('mandatory', 'optional', 'require_all_scopes')),
        position          integer     NOT NULL,
        PRIMARY KEY (permission_set_id, service_id)
      )`);
    await queryRunner.query(
      'CREATE INDEX permission_set_service_scopes_service_idx ON permission_set_service_scopes (service_id)',
    );
    await queryRunner.query(`
      CREATE TABLE agent_client_credentials (
        agent_id      uuid        PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
        secret_sha256 bytea       NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        rotated_at    timestamptz
      )`);
    await queryRunner.query(`
      CREATE TABLE signing_keys (
        kid                  varchar(128) PRIMARY KEY,
        algorithm            varchar(16)  NOT NULL CHECK (algorithm IN ('ES256', 'RS256', 'EdDSA')),
        public_jwk           jsonb        NOT NULL,
        private_key_envelope bytea        NOT NULL,
        is_current           boolean      NOT NULL DEFAULT false,
        created_at           timestamptz  NOT NULL DEFAULT now(),
        deleted_at           timestamptz
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys ((true)) WHERE is_current AND deleted_at IS NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'signing_keys',
      'agent_client_credentials',
      'permission_set_service_scopes',
      'service_protected_resources',
      'services',
      'agent_permission_sets',
      'agents',
      'permission_sets',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
