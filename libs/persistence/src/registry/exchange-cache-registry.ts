import type { DataSource } from 'typeorm';

/** What a write needs of the token exchange's context cache (`ExchangeContextCache`). */
interface Invalidates {
  invalidate(principal: string | undefined): void;
}

const CACHES = new WeakMap<DataSource, Invalidates>();

/** `Database`: its context cache, found from its data source by the repositories that write. */
export function registerExchangeCache(dataSource: DataSource, cache: Invalidates): void {
  CACHES.set(dataSource, cache);
}

/**
 * After a write through this process has committed: drops what this process keeps for
 * `principal` (everything when undefined) at once, so that its own next request never sees
 * the old rows, whatever the order in which the write's answer and its notification
 * arrive. Other replicas drop it when the notification `NOTIFY exchange_changed` comes.
 */
export function committedExchangeChange(dataSource: DataSource, principal?: string): void {
  CACHES.get(dataSource)?.invalidate(principal);
}
