import type { AnyBrokerEvent } from '../catalogue/event-catalogue';

/** An event ready to insert: the event, its id and when it happened. */
export interface EventToAppend {
  readonly id: string;
  readonly occurredAt: Date;
  readonly event: AnyBrokerEvent;
}

/**
 * Where the ledger writes: the `events` table, whose statements live with the schema in
 * libs/persistence (`EventRepository`). `transaction` is the caller's open transaction,
 * opaque here (the persistence layer's own manager): the events commit or roll back with it;
 * without one (the hot path's batches) they are written on their own.
 */
export interface EventStore {
  append(events: readonly EventToAppend[], transaction?: unknown): Promise<void>;
}

/** What retention deletes with: the events table's purge of up to `batch` events older than `cutoff` (how many went). */
export interface EventPurge {
  purgeBefore(cutoff: Date, batch: number): Promise<number>;
}
