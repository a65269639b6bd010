import type { DatabaseReaders } from '@broker/telemetry';
import type { DataSource } from 'typeorm';
import type { ExclusiveLock } from '../pglite/exclusive-lock';

/** node-postgres' pool counters (pg `Pool`), as TypeORM's driver holds it. */
interface PgPoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

async function count(dataSource: DataSource, sql: string): Promise<number> {
  const [row] = await dataSource.query<{ n: number }[]>(sql);
  return row?.n ?? 0;
}

/**
 * The reads behind the database gauges, one cheap statement each (the metrics
 * cache them ~10 s). Sessions needing re-authentication; approvals still pending (not yet
 * past `expires_at`, which are expired lazily); the pool's connections: node-postgres'
 * counters, or PGlite's one exclusive connection and the callers waiting for it.
 */
export function databaseReaders(dataSource: DataSource, pgliteLock: ExclusiveLock | undefined): DatabaseReaders {
  const master = (dataSource.driver as unknown as { master?: PgPoolCounts }).master;
  return {
    sessionsNeedingReauthentication: () =>
      count(dataSource, 'SELECT count(*)::int AS n FROM third_party_sessions WHERE needs_reauthentication'),
    approvalsPending: () =>
      count(
        dataSource,
        "SELECT count(*)::int AS n FROM approvals WHERE status = 'pending' AND (expires_at IS NULL OR expires_at > now())",
      ),
    pool: () => {
      if (pgliteLock !== undefined)
        return { inUse: pgliteLock.isHeld ? 1 : 0, idle: pgliteLock.isHeld ? 0 : 1, waiting: pgliteLock.waiting };
      const inUse = (master?.totalCount ?? 0) - (master?.idleCount ?? 0);
      return { inUse, idle: master?.idleCount ?? 0, waiting: master?.waitingCount ?? 0 };
    },
  };
}
