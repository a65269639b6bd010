import type { NextFunction, Request, Response } from 'express';

/** The database statements one request has sent so far. */
export interface QueryCount {
  queries: number;
}

/**
 * Runs `work` with `count` as the current database statement counter. The process's
 * bootstrap hands in persistence's `runCountingQueries`: http counts statements without
 * importing the database (lib boundaries as allow-lists, http sits above no storage).
 */
export type CountQueries = <T>(count: QueryCount, work: () => T) => T;

const counts = new WeakMap<Request, QueryCount>();

/**
 * Counts the database statements of each request (guards, pipes, handler and filters all
 * run inside the scope opened here) for the `db_queries` field of its log line. Installed
 * after body parsing: the rest of a body that arrives in later packets is delivered by the
 * socket's events, which carry the socket's asynchronous context, not the request's.
 */
export function queryCountMiddleware(countQueries: CountQueries) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    const count: QueryCount = { queries: 0 };
    counts.set(request, count);
    countQueries(count, next);
  };
}

/** Statements the request has sent so far; undefined when it never reached the counter. */
export function queryCountOf(request: Request): number | undefined {
  return counts.get(request)?.queries;
}
