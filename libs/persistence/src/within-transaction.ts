import type { EntityManager } from 'typeorm';

/**
 * Work a repository runs inside its own write's transaction, with the write's result and the
 * transaction's manager: where a state change's ledger events are recorded (`recordChange`
 * of @broker/events builds it).
 */
export type WithinTransaction<T> = (result: T, manager: EntityManager) => Promise<void>;
