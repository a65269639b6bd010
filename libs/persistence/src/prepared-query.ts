import { traceStatement } from '@broker/telemetry';
import type { DataSource } from 'typeorm';
import { PglitePool } from './pglite/pglite-pool';
import { countQuery } from './query-count';

interface PgPool {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * A statement of the request hot path, prepared once per pooled connection. On PostgreSQL
 * it goes straight to the pg pool TypeORM built (the same connections and type parsers)
 * as a named statement: parsed and planned once per connection instead of per request,
 * and without TypeORM's per-call query-runner bookkeeping. On PGlite (one in-process
 * backend behind the exclusive-lock pool) it is an ordinary `dataSource.query`.
 */
export function preparedQuery<Row>(
  dataSource: DataSource,
  name: string,
  text: string,
): (values: readonly unknown[]) => Promise<Row[]> {
  const pool = (dataSource.driver as unknown as { master?: unknown }).master;
  if (isPgPool(pool) && !(pool instanceof PglitePool)) {
    return async (values) => {
      // Straight on the pool, past TypeORM's logger: counted here instead.
      countQuery();
      // A `db <OPERATION>` span of the current request when tracing is enabled.
      return (await traceStatement(text, () => pool.query({ name, text, values }))).rows as Row[];
    };
  }
  return (values) => dataSource.query<Row[]>(text, [...values]);
}

function isPgPool(value: unknown): value is PgPool {
  return value !== null && typeof value === 'object' && typeof (value as { query?: unknown }).query === 'function';
}
