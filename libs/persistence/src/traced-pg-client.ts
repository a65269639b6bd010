import { traceStatement } from '@broker/telemetry';
import { Client } from 'pg';

type Query = (...args: unknown[]) => unknown;
// The prototype's method, called with each client as `this` (never detached from one).
const untracedQuery = Reflect.get(Client.prototype, 'query') as Query;

/** True for the calls `TracedPgClient` leaves alone: callback style (pg-pool's own `query`) and submittables (streams). */
function untraced(args: readonly unknown[]): boolean {
  const first = args[0] as { submit?: unknown } | undefined;
  return typeof args[args.length - 1] === 'function' || typeof first?.submit === 'function';
}

/**
 * The pg client the PostgreSQL pool makes when tracing is enabled (pool option
 * `Client`, chosen once at boot: without tracing the pool keeps pg's own). Every statement
 * TypeORM sends (promise style) is a `db <OPERATION>` span of the current request; the hot
 * path's prepared statements, sent through the pool's callback-style `query`, are traced
 * by `preparedQuery` instead, so nothing is counted twice.
 */
export class TracedPgClient extends Client {}

TracedPgClient.prototype.query = function query(this: Client, ...args: unknown[]): unknown {
  if (untraced(args)) return untracedQuery.apply(this, args);
  const first = args[0] as string | { text?: unknown };
  const text = typeof first === 'string' ? first : typeof first.text === 'string' ? first.text : '';
  return traceStatement(text, () => untracedQuery.apply(this, args) as Promise<unknown>);
} as unknown as Client['query'];
