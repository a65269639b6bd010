import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two indexes for a person's activity reads, which otherwise read every event of the
 * person (or, planned by the primary key, much of the table) for one answer:
 * - `events_last_used_idx`: the person's successful token exchanges by agent, service and
 *   `seq`, for `GET /api/activity/last-used`; `EventRepository.lastUsed` walks it one
 *   (agent, service) pair at a time (one index descent a pair, never the person's events).
 * - `events_principal_type_seq_idx`: the person's events of one kind, newest first, for the
 *   kind filter of `GET /api/activity` (and the admin list filtered by principal and kind).
 *   Without `token.exchanged`, the kind written at the exchange rate: it is most of a
 *   person's events, so the person's pages index finds its newest ones at once, and
 *   leaving it out keeps this index off the hot path's writes (and a tenth of the size).
 * The first one is an index insertion per successful token exchange on the hot path;
 * bench/RESULTS.md has the read latencies and the write cost with and without them. Built
 * inside the migration's transaction (no CONCURRENTLY), so appends wait while a large
 * ledger is indexed (seconds for a million events); the ledger's queue holds them meanwhile.
 */
export class ActivityIndexes1764130000000 implements MigrationInterface {
  name = 'ActivityIndexes1764130000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX events_last_used_idx ON events (principal, agent_id, service_id, seq DESC)
        WHERE type = 'token.exchanged' AND outcome = 'success' AND principal IS NOT NULL AND agent_id IS NOT NULL AND service_id IS NOT NULL`,
    );
    await queryRunner.query(
      "CREATE INDEX events_principal_type_seq_idx ON events (principal, type, seq DESC) WHERE principal IS NOT NULL AND type <> 'token.exchanged'",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX events_principal_type_seq_idx');
    await queryRunner.query('DROP INDEX events_last_used_idx');
  }
}
