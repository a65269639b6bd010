import { AsyncLocalStorage } from 'node:async_hooks';

/** The database statements one unit of work (an HTTP request) has sent so far. */
export interface QueryCount {
  queries: number;
}

const current = new AsyncLocalStorage<QueryCount>();

/**
 * Runs `work` with `count` as the current query counter: every statement sent from code
 * running in it (awaits and callbacks included) adds one, transaction control statements
 * too. The request pipeline opens one per request; its log line reports the total.
 */
export function runCountingQueries<T>(count: QueryCount, work: () => T): T {
  return current.run(count, work);
}

/** Adds one statement to the current counter, if any (called for every query sent). */
export function countQuery(): void {
  const count = current.getStore();
  if (count !== undefined) count.queries += 1;
}
