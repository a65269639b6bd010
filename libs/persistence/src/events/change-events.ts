import type { AnyBrokerEvent, BrokerEvent, EventDetailsByType, EventType } from '@broker/domain';
import { currentTraceId } from '@broker/telemetry';
import type { EventLedger, WithinTransaction } from './event-ledger';

/**
 * Issue 17: the `within` a repository runs in its write's own transaction, recording the
 * events built from the write's result (only when something changed: the repository calls
 * it then), so a committed change always has its events and a rolled-back one never does.
 * Undefined when the ledger is off (`events.enabled: false`): the write keeps its
 * ledger-free path (no transaction it would not otherwise need).
 */
export function recordChange<T>(
  ledger: EventLedger,
  build: (result: T) => AnyBrokerEvent | readonly AnyBrokerEvent[],
): WithinTransaction<T> | undefined {
  if (!ledger.enabled) return undefined;
  return async (result, manager) => {
    const built = build(result);
    for (const event of Array.isArray(built) ? (built as readonly AnyBrokerEvent[]) : [built as AnyBrokerEvent])
      await ledger.record(event, manager);
  };
}

/** What an admin write concerns: the agent or service it changed, when it is one. */
export interface AdminEventSubject {
  readonly agentId?: string;
  readonly serviceId?: string;
}

/**
 * Issue 17: the ledger event of an admin write (registry, client credentials, signing keys):
 * the actor is the admin principal (the request's principal header), there is no subject
 * principal, and the trace id is the request's. Details carry identifiers and names only,
 * never a secret or key material (`client_id` and `kid` are identifiers).
 */
export function adminEvent<K extends EventType>(
  type: K,
  admin: string,
  subject: AdminEventSubject,
  details: EventDetailsByType[K],
): BrokerEvent<K> {
  return {
    type,
    actor: { type: 'admin', id: admin },
    principal: null,
    agentId: subject.agentId ?? null,
    serviceId: subject.serviceId ?? null,
    outcome: 'success',
    traceId: currentTraceId(),
    details,
  };
}
