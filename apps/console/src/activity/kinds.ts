import type { ApprovalNow } from '../api/queries';
import type { components } from '../api/user-api';

export type ActivityEvent = components['schemas']['ActivityEvent'];
export type EventKind = ActivityEvent['type'];

/**
 * Each event kind in words a person reads ("Token used", not
 * `token.exchanged`). Every kind of the API's enum has one (the compiler checks it).
 */
export const KIND_LABELS: Record<EventKind, string> = {
  'token.exchanged': 'Token used',
  'impersonation.decided': 'Acted as you',
  'grant.created': 'Access granted',
  'grant.replaced': 'Access changed',
  'grant.revoked': 'Access revoked',
  'grant.expired': 'Access expired',
  'consent.denied': 'Access declined',
  'session.connected': 'Service connected',
  'session.refreshed': 'Connection refreshed',
  'session.needs_reauthentication': 'Needs reconnecting',
  'session.disconnected': 'Service disconnected',
  'approval.requested': 'Approval requested',
  'approval.approved': 'Approval given',
  'approval.denied': 'Approval denied',
  'approval.consumed': 'Approved call made',
  // A remembered decision revoked, or any live approval ended with the agent's access (docs/approvals.md).
  'approval.revoked': 'Approval revoked',
  'approval.expired': 'Approval expired',
  'authorization_request.created': 'Access asked for',
  'authorization_request.completed': 'Access request allowed',
  'authorization_request.denied': 'Access request denied',
  'authorization_request.expired': 'Access link expired',
  'authorization_request.misdirected': 'Your link opened by someone else',
  'client_credentials.issued': 'Agent credentials issued',
  'client_credentials.rotated': 'Agent credentials rotated',
  'client_credentials.revoked': 'Agent credentials revoked',
  'signing_key.added': 'Signing key added',
  'signing_key.promoted': 'Signing key promoted',
  'signing_key.removed': 'Signing key removed',
  'agent.created': 'Agent created',
  'agent.changed': 'Agent changed',
  'agent.deleted': 'Agent deleted',
  'agent.suspended': 'Agent suspended',
  'agent.resumed': 'Agent resumed',
  'service.created': 'Service created',
  'service.changed': 'Service changed',
  'service.deleted': 'Service deleted',
  'resource.created': 'MCP server added',
  'resource.changed': 'MCP server changed',
  'resource.deleted': 'MCP server removed',
  'permission_set.created': 'Permission set created',
  'permission_set.changed': 'Permission set changed',
  'permission_set.deleted': 'Permission set deleted',
  'refresh_token.issued': 'Stayed signed in',
  'refresh_token.rotated': 'Sign-in renewed',
  'refresh_token.reused': 'Stolen sign-in stopped',
  'refresh_token.revoked': 'Signed out',
  'access_token.revoked': 'Token revoked',
  'enterprise_access.decided': 'Allowed by your organisation',
  'enterprise_access.revoked': 'Organisation access revoked',
};

/** The kinds a person's activity holds, grouped as the kind filter offers them (administration kinds never name a person). */
export const KIND_GROUPS: readonly { readonly label: string; readonly kinds: readonly EventKind[] }[] = [
  { label: 'Agents using your access', kinds: ['token.exchanged', 'impersonation.decided'] },
  {
    label: 'Access you gave',
    kinds: ['grant.created', 'grant.replaced', 'grant.revoked', 'grant.expired', 'consent.denied'],
  },
  { label: 'Allowed by your organisation', kinds: ['enterprise_access.decided', 'enterprise_access.revoked'] },
  {
    label: 'Agent sign-ins',
    kinds: [
      'refresh_token.issued',
      'refresh_token.rotated',
      'refresh_token.reused',
      'refresh_token.revoked',
      'access_token.revoked',
    ],
  },
  {
    label: 'Connections',
    kinds: ['session.connected', 'session.refreshed', 'session.needs_reauthentication', 'session.disconnected'],
  },
  {
    label: 'Approvals',
    kinds: [
      'approval.requested',
      'approval.approved',
      'approval.denied',
      'approval.consumed',
      'approval.revoked',
      'approval.expired',
    ],
  },
  {
    label: 'Access requests',
    kinds: [
      'authorization_request.created',
      'authorization_request.completed',
      'authorization_request.denied',
      'authorization_request.expired',
      'authorization_request.misdirected',
    ],
  },
];

/** Who did it, as a phrase ("by you"); an administrator or another person is never named (the API leaves their id out). */
export function actorPhrase(actor: ActivityEvent['actor'], agentName: string | null): string {
  switch (actor.type) {
    case 'principal':
      return actor.id === null ? 'by another person' : 'by you';
    case 'agent':
      return agentName === null ? 'by an agent' : `by ${agentName}`;
    case 'gateway':
      return agentName === null ? 'through a gateway' : `by ${agentName}, through a gateway`;
    case 'admin':
      return 'by an administrator';
    case 'broker':
      return 'by the broker';
  }
}

/** A badge's words and colour (the classes of app.css: success, warning, danger; '' is neutral). */
export interface OutcomeBadge {
  readonly label: string;
  readonly tone: 'success' | 'warning' | 'danger' | '';
}

/**
 * What the event's badge says: what came of it, in the kind's own terms. `success` only means
 * the broker did what was asked, so a denial, a revocation or an expiry recorded as a success
 * is still not a green "Succeeded".
 */
const SUCCESS_BADGES: Partial<Record<EventKind, OutcomeBadge>> = {
  'grant.created': { label: 'Granted', tone: 'success' },
  'grant.replaced': { label: 'Changed', tone: 'success' },
  'grant.revoked': { label: 'Revoked', tone: '' },
  'grant.expired': { label: 'Expired', tone: '' },
  'consent.denied': { label: 'Declined', tone: 'warning' },
  'session.connected': { label: 'Connected', tone: 'success' },
  'session.refreshed': { label: 'Refreshed', tone: 'success' },
  'session.needs_reauthentication': { label: 'Needs you', tone: 'warning' },
  'session.disconnected': { label: 'Disconnected', tone: '' },
  // What became of the request is its own badge (`requestBadge`): it may have been decided since.
  'approval.requested': { label: 'Requested', tone: '' },
  'approval.approved': { label: 'Approved', tone: 'success' },
  'approval.denied': { label: 'Denied', tone: 'danger' },
  'approval.consumed': { label: 'Used', tone: 'success' },
  'approval.revoked': { label: 'Revoked', tone: '' },
  'approval.expired': { label: 'Expired', tone: '' },
  'refresh_token.revoked': { label: 'Signed out', tone: '' },
  'access_token.revoked': { label: 'Revoked', tone: '' },
  'enterprise_access.decided': { label: 'Allowed', tone: 'success' },
  'enterprise_access.revoked': { label: 'Revoked', tone: '' },
  'authorization_request.created': { label: 'Asked', tone: '' },
  'authorization_request.completed': { label: 'Allowed', tone: 'success' },
  'authorization_request.denied': { label: 'Denied', tone: 'danger' },
  'authorization_request.expired': { label: 'Expired', tone: '' },
};

export function outcomeBadge(type: EventKind, outcome: ActivityEvent['outcome']): OutcomeBadge {
  if (outcome === 'failure') {
    if (type === 'refresh_token.reused') return { label: 'Stopped', tone: 'danger' };
    // The organisation's identity provider vouched, the broker said no (the OAuth error says why).
    if (type === 'enterprise_access.decided') return { label: 'Refused', tone: 'danger' };
    // Someone else opened the person's access-request link: refused, nothing changed (recorded as a failure).
    if (type === 'authorization_request.misdirected') return { label: 'Refused', tone: 'warning' };
    return { label: 'Failed', tone: 'danger' };
  }
  return SUCCESS_BADGES[type] ?? { label: 'Succeeded', tone: 'success' };
}

/**
 * The badge of an approval request (`approval.requested`) by what became of it: "Waiting for you" only while it
 * still waits; decided, it says how; unknown (being read, or gone), it claims nothing.
 */
export function requestBadge(now: ApprovalNow | undefined): OutcomeBadge {
  if (now === undefined || now.kind === 'gone') return { label: 'Requested', tone: '' };
  if (now.kind === 'expired') return { label: 'Expired', tone: '' };
  switch (now.approval.status) {
    case 'pending':
      return { label: 'Waiting for you', tone: 'warning' };
    case 'approved':
      return { label: 'Approved', tone: 'success' };
    case 'denied':
      return { label: 'Denied', tone: 'danger' };
    case 'revoked':
      return { label: 'Revoked', tone: '' };
  }
}

type ApprovalRecord = components['schemas']['ApprovalView'];

/** The decision the person made on a request, if any, in words. */
function decisionWords(approval: ApprovalRecord): string | null {
  if (approval.approved_at !== null)
    return approval.persistence === 'permanent'
      ? 'You approved it always'
      : approval.persistence === 'session'
        ? 'You approved it for the agent session'
        : 'You approved it for this call only';
  if (approval.denied_at !== null)
    return approval.persistence === 'permanent' ? 'You denied it always' : 'You denied it';
  return null;
}

/**
 * What became of an approval request since it was asked, in words; null while it still waits. A request revoked
 * without a decision was ended by the revocation of the agent's access (docs/approvals.md, "Grants and approvals").
 */
export function requestOutcomeWords(approval: ApprovalRecord): string | null {
  const decision = decisionWords(approval);
  switch (approval.status) {
    case 'pending':
      return null;
    case 'approved':
      return approval.persistence === 'permanent'
        ? `${decision ?? 'You approved it'}, until you revoke it`
        : `${decision ?? 'You approved it'}${approval.consumed_at === null ? '' : ', and the call was made'}`;
    case 'denied':
      return decision ?? 'You denied it';
    case 'revoked':
      return decision === null
        ? 'It ended without a decision when the agent’s access was revoked'
        : `${decision}; that decision was revoked since`;
  }
}

/**
 * An access request of an agent (a gateway's refused token exchange, answered through its link) as one sentence:
 * "Trip Planner asked for access to Mail", "You allowed …", "Someone else (bob@example.com) opened your link for …".
 * Null for every other kind (its label is its title). `opener` is the other person, when the event names them.
 */
export function accessRequestSentence(
  type: EventKind,
  agent: string | null,
  service: string | null,
  opener: string | null,
): string | null {
  const sentence = ACCESS_REQUEST_SENTENCES[type];
  return sentence === undefined ? null : sentence(agent ?? 'an agent', service ?? 'a service', opener);
}

const ACCESS_REQUEST_SENTENCES: Partial<
  Record<EventKind, (agent: string, service: string, opener: string | null) => string>
> = {
  'authorization_request.created': (agent, service) => `${capitalized(agent)} asked for access to ${service}`,
  'authorization_request.completed': (agent, service) => `You allowed ${agent} access to ${service}`,
  'authorization_request.denied': (agent, service) => `You denied ${agent} access to ${service}`,
  'authorization_request.expired': (agent, service) => `The link for ${agent}'s access to ${service} expired`,
  'authorization_request.misdirected': (agent, service, opener) =>
    `Someone else${opener !== null ? ` (${opener})` : ''} opened your link for ${agent}'s access to ${service}`,
};

function capitalized(phrase: string): string {
  return phrase.slice(0, 1).toUpperCase() + phrase.slice(1);
}
