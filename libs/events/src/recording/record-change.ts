import type { AnyBrokerEvent } from '../catalogue/event-catalogue';
import type { EventLedger } from './event-ledger';

/**
 * The work a repository runs in its write's own transaction (its `WithinTransaction`),
 * recording the events built from the write's result (only when something changed: the
 * repository calls it then), so a committed change always has its events and a rolled-back
 * one never does. Undefined when the ledger is off (`events.enabled: false`): the write keeps
 * its ledger-free path (no transaction it would not otherwise need).
 */
export function recordChange<T>(
  ledger: EventLedger,
  build: (result: T) => AnyBrokerEvent | readonly AnyBrokerEvent[],
): ((result: T, transaction: unknown) => Promise<void>) | undefined {
  if (!ledger.enabled) return undefined;
  return async (result, transaction) => {
    const built = build(result);
    for (const event of Array.isArray(built) ? (built as readonly AnyBrokerEvent[]) : [built as AnyBrokerEvent])
      await ledger.record(event, transaction);
  };
}
