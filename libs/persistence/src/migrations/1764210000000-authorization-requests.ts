import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Authorization requests (docs/authorization-requests.md): a refused token exchange's
 * link for the person to allow the agent a service, or connect it.
 *
 * - One pending request per (principal, agent, service, requested scopes): the partial
 *   unique index `authorization_requests_pending_uq` decides a duplicate, never
 *   check-then-insert. `scopes` is the requested scopes sorted and space-joined.
 * - `allowed_at` set and `status = 'pending'`: allowed, waiting for the connection.
 * - The triggers bump the approvals' `approval_sync_version` and notify `approvals_changed`
 *   (the same counter and channel, see 1763835000000-tool-approvals): the approvals change
 *   feed already listening on every replica wakes the gateways waiting on a request, with
 *   no second LISTEN. A waiter re-reads its one request by primary key when woken.
 */
export class AuthorizationRequests1764210000000 implements MigrationInterface {
  name = 'AuthorizationRequests1764210000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE authorization_requests (
        id                 uuid         PRIMARY KEY,
        principal          varchar(200) NOT NULL,
        agent_id           uuid         NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
        service_id         uuid         NOT NULL REFERENCES services (id) ON DELETE CASCADE,
        scopes             text         NOT NULL,
        permission_set_ids uuid[]       NOT NULL,
        needs_grant        boolean      NOT NULL,
        needs_connection   boolean      NOT NULL,
        status             varchar(9)   NOT NULL CHECK (status IN ('pending', 'completed', 'denied', 'expired')),
        allowed_at         timestamptz  NULL,
        answered_at        timestamptz  NULL,
        created_at         timestamptz  NOT NULL,
        expires_at         timestamptz  NOT NULL,
        created_by         varchar(512) NULL
      )`);
    await queryRunner.query(
      "CREATE UNIQUE INDEX authorization_requests_pending_uq ON authorization_requests (principal, agent_id, service_id, scopes) WHERE status = 'pending'",
    );
    await queryRunner.query(
      "CREATE INDEX authorization_requests_pending_principal_idx ON authorization_requests (principal) WHERE status = 'pending'",
    );
    await queryRunner.query(
      'CREATE INDEX authorization_requests_pair_created_idx ON authorization_requests (principal, agent_id, created_at)',
    );
    await queryRunner.query(
      "CREATE INDEX authorization_requests_expiry_idx ON authorization_requests (expires_at) WHERE status = 'pending'",
    );
    await queryRunner.query(
      "CREATE INDEX authorization_requests_allowed_idx ON authorization_requests (principal, service_id) WHERE status = 'pending' AND allowed_at IS NOT NULL",
    );
    await queryRunner.query('CREATE INDEX authorization_requests_service_idx ON authorization_requests (service_id)');
    await queryRunner.query(`
      CREATE TABLE authorization_request_openers (
        request_id uuid         NOT NULL REFERENCES authorization_requests (id) ON DELETE CASCADE,
        opener     varchar(200) NOT NULL,
        PRIMARY KEY (request_id, opener)
      )`);
    for (const [name, event, table] of [
      ['authorization_requests_inserted', 'INSERT', 'NEW'],
      ['authorization_requests_updated', 'UPDATE', 'NEW'],
      ['authorization_requests_deleted', 'DELETE', 'OLD'],
    ] as const) {
      await queryRunner.query(
        `CREATE TRIGGER ${name} AFTER ${event} ON authorization_requests REFERENCING ${table} TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_bump_sync_version()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE authorization_request_openers');
    await queryRunner.query('DROP TABLE authorization_requests');
  }
}
