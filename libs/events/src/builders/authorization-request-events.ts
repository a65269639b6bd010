import type { AnyBrokerEvent, EventActor } from '../catalogue/event-catalogue';

/** The authorization request kinds of the activity ledger. */
export type AuthorizationRequestEventType =
  | 'authorization_request.created'
  | 'authorization_request.completed'
  | 'authorization_request.denied'
  | 'authorization_request.expired'
  | 'authorization_request.misdirected';

/** What the events read of a request (the store's record satisfies it). */
export interface AuthorizationRequestFacts {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly serviceId: string;
  readonly scopes: readonly string[];
  readonly needsGrant: boolean;
  readonly needsConnection: boolean;
}

/**
 * The ledger event of an authorization request (docs/authorization-requests.md), on its
 * person's activity: actor the gateway (created), the person (completed, denied), the opener
 * (misdirected) or the broker (expired, no trace id). Never a token.
 */
export function authorizationRequestEvent(
  type: Exclude<AuthorizationRequestEventType, 'authorization_request.misdirected'>,
  request: AuthorizationRequestFacts,
  actor: EventActor,
  traceId: string | null,
): AnyBrokerEvent {
  return {
    type,
    actor,
    principal: request.principal,
    agentId: request.agentId,
    serviceId: request.serviceId,
    outcome: 'success',
    traceId,
    details: {
      authorization_request_id: request.id,
      scopes: [...request.scopes],
      needs_grant: request.needsGrant,
      needs_connection: request.needsConnection,
    },
  };
}

/** Someone other than the request's person opened its link: recorded on the owner's activity, naming the opener. */
export function authorizationRequestMisdirected(request: AuthorizationRequestFacts, opener: string): AnyBrokerEvent {
  return {
    type: 'authorization_request.misdirected',
    actor: { type: 'principal', id: opener },
    principal: request.principal,
    agentId: request.agentId,
    serviceId: request.serviceId,
    outcome: 'failure',
    traceId: null,
    details: {
      authorization_request_id: request.id,
      scopes: [...request.scopes],
      needs_grant: request.needsGrant,
      needs_connection: request.needsConnection,
      opener,
    },
  };
}
