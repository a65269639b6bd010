import type { components } from '../api/admin-api';

export type AdminEvent = components['schemas']['EventResponse'];
export type EventKind = AdminEvent['type'];

/**
 * Each event kind in words an administrator reads ("Token exchanged", not `token.exchanged`). Keyed by string, not
 * by the API's enum, so a kind the API adds later still reads: `kindLabel` words an unknown one from its name.
 */
const KIND_LABELS: Readonly<Record<string, string>> = {
  'token.exchanged': 'Token exchanged',
  'impersonation.decided': 'Acted as a person',
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
  'approval.revoked': 'Approval revoked',
  'approval.expired': 'Approval expired',
  'authorization_request.created': 'Access asked for',
  'authorization_request.completed': 'Access request allowed',
  'authorization_request.denied': 'Access request denied',
  'authorization_request.expired': 'Access link expired',
  'authorization_request.misdirected': 'Access link opened by someone else',
  'client_credentials.issued': 'Client credentials issued',
  'client_credentials.rotated': 'Client credentials rotated',
  'client_credentials.revoked': 'Client credentials revoked',
  'signing_key.added': 'Signing key added',
  'signing_key.promoted': 'Signing key made current',
  'signing_key.removed': 'Signing key retired',
  'agent.created': 'Agent registered',
  'agent.changed': 'Agent changed',
  'agent.deleted': 'Agent deleted',
  'agent.suspended': 'Agent suspended',
  'agent.resumed': 'Agent resumed',
  'service.created': 'Service added',
  'service.changed': 'Service changed',
  'service.deleted': 'Service deleted',
  'resource.created': 'MCP server added',
  'resource.changed': 'MCP server changed',
  'resource.deleted': 'MCP server removed',
  'permission_set.created': 'Permission set created',
  'permission_set.changed': 'Permission set changed',
  'permission_set.deleted': 'Permission set deleted',
  'refresh_token.issued': 'Refresh token issued',
  'refresh_token.rotated': 'Refresh token rotated',
  'refresh_token.reused': 'Stolen refresh token stopped',
  'refresh_token.revoked': 'Refresh token revoked',
  'access_token.revoked': 'Access token revoked',
  'enterprise_access.decided': 'Allowed by the organisation',
  'enterprise_access.revoked': 'Organisation access revoked',
};

/** The kind in words; a kind this console does not know yet: its name with spaces ("webhook.paused" → "Webhook paused"). */
export function kindLabel(type: string): string {
  const known = KIND_LABELS[type];
  if (known !== undefined) return known;
  const words = type.replace(/[._]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The kinds, grouped as the Activity page's kind filter offers them. */
export const KIND_GROUPS: readonly { readonly label: string; readonly kinds: readonly string[] }[] = [
  { label: 'Tokens', kinds: ['token.exchanged', 'impersonation.decided', 'access_token.revoked'] },
  {
    label: 'Refresh tokens',
    kinds: ['refresh_token.issued', 'refresh_token.rotated', 'refresh_token.reused', 'refresh_token.revoked'],
  },
  {
    label: "People's access",
    kinds: ['grant.created', 'grant.replaced', 'grant.revoked', 'grant.expired', 'consent.denied'],
  },
  { label: 'Organisation access', kinds: ['enterprise_access.decided', 'enterprise_access.revoked'] },
  {
    label: 'Connections to services',
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
  {
    label: 'Agents',
    kinds: [
      'agent.created',
      'agent.changed',
      'agent.deleted',
      'agent.suspended',
      'agent.resumed',
      'client_credentials.issued',
      'client_credentials.rotated',
      'client_credentials.revoked',
    ],
  },
  {
    label: 'Registry',
    kinds: [
      'service.created',
      'service.changed',
      'service.deleted',
      'resource.created',
      'resource.changed',
      'resource.deleted',
      'permission_set.created',
      'permission_set.changed',
      'permission_set.deleted',
    ],
  },
  { label: 'Signing keys', kinds: ['signing_key.added', 'signing_key.promoted', 'signing_key.removed'] },
];

/** Who did it, in words: the administrator or person by name, an agent by its name when known. */
export function actorWords(actor: AdminEvent['actor'], agentName: (id: string) => string | undefined): string {
  switch (actor.type) {
    case 'admin':
      return actor.id === null ? 'an administrator' : actor.id;
    case 'principal':
      return actor.id ?? 'a person';
    case 'agent':
      return actor.id === null ? 'an agent' : (agentName(actor.id) ?? 'an agent');
    case 'gateway':
      return actor.id === null ? 'a gateway' : `gateway ${actor.id}`;
    case 'broker':
      return 'the broker';
  }
}
