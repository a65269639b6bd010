import { currentTraceId } from '@broker/telemetry';
import type { BrokerEvent, EventDetailsByType } from '../catalogue/event-catalogue';

/** A person's own change to their delegation of an agent: they are its actor and its subject. */
export function grantEvent<K extends 'grant.created' | 'grant.replaced' | 'grant.revoked' | 'grant.expired'>(
  type: K,
  principal: string,
  agentId: string,
  details: EventDetailsByType[K],
): BrokerEvent<K> {
  return {
    type,
    actor: { type: 'principal', id: principal },
    principal,
    agentId,
    serviceId: null,
    outcome: 'success',
    traceId: currentTraceId(),
    details,
  };
}

/** The person declined an agent's authorization request on the consent page; the resources it named. */
export function consentDenied(
  principal: string,
  agentId: string,
  resources: readonly string[],
): BrokerEvent<'consent.denied'> {
  return {
    type: 'consent.denied',
    actor: { type: 'principal', id: principal },
    principal,
    agentId,
    serviceId: null,
    outcome: 'success',
    traceId: currentTraceId(),
    details: { resources },
  };
}

/** The person connected a third-party service (the scopes granted). */
export function sessionConnected(
  principal: string,
  serviceId: string,
  scopes: readonly string[],
): BrokerEvent<'session.connected'> {
  return {
    type: 'session.connected',
    actor: { type: 'principal', id: principal },
    principal,
    agentId: null,
    serviceId,
    outcome: 'success',
    traceId: currentTraceId(),
    details: { scopes },
  };
}

/** The person disconnected a third-party service (its stored tokens deleted). */
export function sessionDisconnected(
  principal: string,
  serviceId: string,
  traceId: string | null,
): BrokerEvent<'session.disconnected'> {
  return {
    type: 'session.disconnected',
    actor: { type: 'principal', id: principal },
    principal,
    agentId: null,
    serviceId,
    outcome: 'success',
    traceId,
    details: {},
  };
}

/** What started a third-party refresh: an exchange, the proactive sweep, or the person (`forced`). */
export type SessionRefreshTrigger = EventDetailsByType['session.refreshed']['trigger'];

/**
 * A third-party session refreshed, or found to need the person to sign in again (a failure).
 * The person forcing a refresh is its actor; an exchange's or the sweep's refresh is the
 * broker's own work (the trigger says which).
 */
export function sessionRefreshEvent(
  type: 'session.refreshed' | 'session.needs_reauthentication',
  principal: string,
  serviceId: string,
  trigger: SessionRefreshTrigger,
  traceId: string | null,
): BrokerEvent<typeof type> {
  return {
    type,
    actor: trigger === 'forced' ? { type: 'principal', id: principal } : { type: 'broker', id: null },
    principal,
    agentId: null,
    serviceId,
    outcome: type === 'session.refreshed' ? 'success' : 'failure',
    traceId,
    details: { trigger },
  };
}

/** What the person's organisation allowed an agent, as its revocation names it. */
export interface RevokedEnterpriseAccess {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  readonly issuer: string;
  readonly resourceUri: string;
}

/**
 * What the person's organisation allowed an agent (an enterprise authorization) was revoked by
 * the person (`principal` actor) or by an administrator (`admin` actor, their principal): the
 * person is its subject either way, so it reads in their activity. Names the authorization, its
 * issuer and resource; never a token or an assertion.
 */
export function enterpriseAccessRevoked(
  access: RevokedEnterpriseAccess,
  actor: { readonly type: 'principal' | 'admin'; readonly id: string },
): BrokerEvent<'enterprise_access.revoked'> {
  return {
    type: 'enterprise_access.revoked',
    actor: { type: actor.type, id: actor.id },
    principal: access.principal,
    agentId: access.agentId,
    serviceId: null,
    outcome: 'success',
    traceId: currentTraceId(),
    details: { authorization_id: access.id, issuer: access.issuer, resource: access.resourceUri },
  };
}
