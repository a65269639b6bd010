import { currentTraceId } from '@broker/telemetry';
import type { BrokerEvent, EventOutcome } from '../catalogue/event-catalogue';

/** How a token endpoint request ended: no OAuth error is a success, an error code a refusal. */
function outcomeOf(oauthError: string | null): EventOutcome {
  return oauthError === null ? 'success' : 'failure';
}

/** What a token exchange concerned, as far as it got before it ended (unknown parts null). */
export interface ExchangeSubject {
  readonly principal: string | null;
  readonly agentId: string | null;
  readonly serviceId: string | null;
  /** The RFC 8707 `resource` it named (already bounded by the caller). */
  readonly resource: string | null;
}

/**
 * An RFC 8693 exchange on the token endpoint, issued or refused (its OAuth error code), by the
 * gateway (its `sub`) that authenticated; never a token or an assertion. Queued (the hot path).
 */
export function tokenExchanged(
  gatewayId: string | null,
  subject: ExchangeSubject,
  oauthError: string | null,
): BrokerEvent<'token.exchanged'> {
  return {
    type: 'token.exchanged',
    actor: { type: 'gateway', id: gatewayId },
    principal: subject.principal,
    agentId: subject.agentId,
    serviceId: subject.serviceId,
    outcome: outcomeOf(oauthError),
    traceId: currentTraceId(),
    details: { resource: subject.resource, oauth_error: oauthError },
  };
}

/** An impersonation decision: the actor acting as the subject towards the target agent, for the `audience` asked. */
export interface ImpersonationSubject {
  readonly actor: string | null;
  readonly subject: string | null;
  readonly agentId: string | null;
  readonly audience: string | null;
}

/** An impersonation token issued or refused (its OAuth error code); never a token or a claim set. Queued (the hot path). */
export function impersonationDecided(
  decision: ImpersonationSubject,
  oauthError: string | null,
): BrokerEvent<'impersonation.decided'> {
  return {
    type: 'impersonation.decided',
    actor: { type: 'principal', id: decision.actor },
    principal: decision.subject,
    agentId: decision.agentId,
    serviceId: null,
    outcome: outcomeOf(oauthError),
    traceId: currentTraceId(),
    details: { audience: decision.audience, oauth_error: oauthError },
  };
}

/** The refresh token family an event is about: its agent (the actor), its person and its id (never the token). */
export interface RefreshFamily {
  readonly agentId: string;
  readonly principal: string | null;
  readonly familyId: string;
}

/** A refresh token family issued, rotated, reused (a refusal: the family is revoked) or revoked by its client. */
export function refreshTokenEvent(
  type: 'refresh_token.issued' | 'refresh_token.rotated' | 'refresh_token.reused' | 'refresh_token.revoked',
  family: RefreshFamily,
  outcome: EventOutcome,
): BrokerEvent<typeof type> {
  return {
    type,
    actor: { type: 'agent', id: family.agentId },
    principal: family.principal,
    agentId: family.agentId,
    serviceId: null,
    outcome,
    traceId: currentTraceId(),
    details: { family_id: family.familyId },
  };
}

/** An access token revoked by its agent (RFC 7009): `jti` names it, never its value. */
export function accessTokenRevoked(
  agentId: string,
  principal: string | null,
  jti: string,
  traceId: string | null,
): BrokerEvent<'access_token.revoked'> {
  return {
    type: 'access_token.revoked',
    actor: { type: 'agent', id: agentId },
    principal,
    agentId,
    serviceId: null,
    outcome: 'success',
    traceId,
    details: { jti },
  };
}

/** What an enterprise-allowed token request concerned, as far as it got (unknown parts null). */
export interface EnterpriseAccessSubject {
  readonly agentId: string;
  readonly principal: string | null;
  readonly issuer: string;
  readonly authorizationId: string | null;
  readonly resource: string | null;
  readonly scopes: readonly string[];
}

/**
 * A token issued or refused (its OAuth error code) on an Identity Assertion JWT Authorization Grant, by the agent
 * that authenticated; never the assertion or the token. Queued (the hot path).
 */
export function enterpriseAccessDecided(
  subject: EnterpriseAccessSubject,
  oauthError: string | null,
): BrokerEvent<'enterprise_access.decided'> {
  return {
    type: 'enterprise_access.decided',
    actor: { type: 'agent', id: subject.agentId },
    principal: subject.principal,
    agentId: subject.agentId,
    serviceId: null,
    outcome: outcomeOf(oauthError),
    traceId: currentTraceId(),
    details: {
      authorization_id: subject.authorizationId,
      issuer: subject.issuer,
      resource: subject.resource,
      scopes: subject.scopes,
      oauth_error: oauthError,
    },
  };
}
