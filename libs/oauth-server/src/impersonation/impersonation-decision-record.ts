import type { AuditValue } from '@broker/audit';
import type { Agent } from '@broker/domain';
import type { PresentedCredentials } from './impersonation-request';
import type { RuleMatch } from './impersonation-rule-matcher';

/** Who the request acts as and for, by the matched rule's expressions. */
export interface Identities {
  readonly subject: string;
  readonly actor: string;
  readonly email: string | undefined;
}

/** What the decision established before it issued or refused; each step adds its result. */
export interface DecisionFacts {
  readonly credentials?: PresentedCredentials;
  readonly target?: Agent;
  readonly match?: RuleMatch;
  readonly identities?: Identities;
}

/** How the decision ended: issued, or refused with the OAuth error and the recorded failure. */
export type DecisionOutcome =
  | { readonly outcome: 'issued' }
  | { readonly outcome: 'refused'; readonly oauthError: string; readonly failure: string };

/**
 * The `impersonation_decision` audit record (docs/oauth2.md): what was
 * decided, from the facts established, never a credential (claims are truncated strings,
 * never token bytes).
 */
export function decisionRecord(
  routingAudience: string | undefined,
  facts: DecisionFacts,
  end: DecisionOutcome,
): Record<string, AuditValue> {
  const { credentials, target, match, identities } = facts;
  return {
    routing_audience: routingAudience ?? null,
    target_agent_id: target?.id ?? null,
    rule: match?.rule.name ?? null,
    client_issuer: credentials === undefined ? null : stringClaim(credentials.client.claims.iss),
    actor_issuer: credentials === undefined ? null : stringClaim(credentials.actor.claims.iss),
    subject_issuer: credentials === undefined ? null : stringClaim(credentials.subject.claims.iss),
    roles: credentials === undefined ? [] : ['client_assertion', 'actor', 'subject'],
    client_id: match === undefined ? null : stringClaim(match.client.sub),
    actor: identities?.actor ?? null,
    subject: identities?.subject ?? null,
    ...(identities !== undefined && match !== undefined ? { verification: match.rule.subject.verification } : {}),
    outcome: end.outcome,
    oauth_error: end.outcome === 'issued' ? null : end.oauthError,
    failure: end.outcome === 'issued' ? null : end.failure,
  };
}

/** A claim as recorded: a non-empty string, at most 512 characters; anything else null. */
export function stringClaim(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 512) : null;
}
