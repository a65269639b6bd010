import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Protected resources (MCP servers, APIs) the broker is the authorization server of: the
 * registry entry (name, logo, RFC 8707 resource URI, the scopes it offers), the scopes of it
 * that a permission set bundles, and the resources a person's grant delegates (with the
 * scopes consented, so a later edit of a permission set never widens a grant silently).
 * A change to the registry entry or a permission set's resource scopes notifies
 * `registry_changed` (the resource catalog each replica keeps in memory), as agents do.
 */
export class ProtectedResources1764170000000 implements MigrationInterface {
  name = 'ProtectedResources1764170000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE protected_resources (
        id           uuid         PRIMARY KEY,
        display_name varchar(255) NOT NULL,
        description  text,
        logo_url     text,
        resource_uri text         NOT NULL UNIQUE,
        scopes       jsonb        NOT NULL DEFAULT '[]',
        created_at   timestamptz  NOT NULL DEFAULT now(),
        updated_at   timestamptz  NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE permission_set_resource_scopes (
        permission_set_id uuid        NOT NULL REFERENCES permission_sets (id) ON DELETE CASCADE,
        resource_id       uuid        NOT NULL REFERENCES protected_resources (id) ON DELETE RESTRICT,
        scopes            jsonb       NOT NULL,
        requirement_type  varchar(32) NOT NULL CHECK (requirement_type IN ('mandatory', 'optional', 'require_all_scopes')),
        position          integer     NOT NULL,
        PRIMARY KEY (permission_set_id, resource_id)
      )`);
    await queryRunner.query(
      'CREATE INDEX permission_set_resource_scopes_resource_idx ON permission_set_resource_scopes (resource_id)',
    );
    await queryRunner.query(`
      CREATE TABLE grant_resources (
        grant_id          uuid    NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
        permission_set_id uuid    NOT NULL REFERENCES permission_sets (id) ON DELETE RESTRICT,
        resource_id       uuid    NOT NULL REFERENCES protected_resources (id) ON DELETE RESTRICT,
        scopes            jsonb   NOT NULL,
        position          integer NOT NULL,
        PRIMARY KEY (grant_id, permission_set_id, resource_id)
      )`);
    await queryRunner.query('CREATE INDEX grant_resources_resource_idx ON grant_resources (resource_id)');
    await queryRunner.query('CREATE INDEX grant_resources_permission_set_idx ON grant_resources (permission_set_id)');
    for (const table of ['protected_resources', 'permission_set_resource_scopes']) {
      await queryRunner.query(
        `CREATE TRIGGER ${table}_registry_changed AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION registry_notify_change()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['grant_resources', 'permission_set_resource_scopes', 'protected_resources'])
      await queryRunner.query(`DROP TABLE ${table}`);
  }
}
