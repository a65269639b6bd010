import { currentTraceId } from '@broker/telemetry';
import type { BrokerEvent, EventDetailsByType, EventType } from '../catalogue/event-catalogue';

/** What an admin write concerns: the agent or service it changed, when it is one. */
export interface AdminEventSubject {
  readonly agentId?: string;
  readonly serviceId?: string;
}

/**
 * The ledger event of an admin write (registry, client credentials, signing keys): the actor
 * is the admin principal (the request's principal header), there is no subject principal, and
 * the trace id is the request's. Details carry identifiers and names only, never a secret or
 * key material (`client_id` and `kid` are identifiers).
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

/** The first signing key, created by the broker itself at boot (no admin, no request). */
export function firstSigningKeyAdded(kid: string, algorithm: string): BrokerEvent<'signing_key.added'> {
  return {
    type: 'signing_key.added',
    actor: { type: 'broker', id: null },
    principal: null,
    agentId: null,
    serviceId: null,
    outcome: 'success',
    traceId: null,
    details: { kid, algorithm },
  };
}
