/**
 * The catalogue of the activity ledger: every kind of business event and its typed `details`
 * (docs/events.md). An event says who did what with whose delegation:
 * identifiers, outcomes and small typed details, never a token, assertion, code, secret,
 * cookie, key or an approval argument's value (argument names and a hash only). The compiler
 * checks every recorded event against its kind's `details` type (`BrokerEvent<K>`), and the
 * list of kinds is derived from `EVENT_KINDS`, which must name every kind of
 * `EventDetailsByType` and no other: a kind missing on either side does not compile, and
 * `npm run lint` type-checks this file alone (scripts/check-event-catalogue.mjs).
 *
 * This file imports nothing, so that check needs no program beyond it.
 */

/** Who did it. */
export type EventActorType = 'principal' | 'agent' | 'gateway' | 'admin' | 'broker';

/** Every actor type once (the read sides' OpenAPI enum), derived like `EVENT_TYPES`. */
export const EVENT_ACTOR_TYPES = Object.keys({
  principal: true,
  agent: true,
  gateway: true,
  admin: true,
  broker: true,
} as const satisfies Record<EventActorType, true>) as readonly EventActorType[];

export interface EventActor {
  readonly type: EventActorType;
  /** The principal, agent id, gateway `sub` or admin principal; null for the broker itself. */
  readonly id: string | null;
}

/** How it ended. */
export type EventOutcome = 'success' | 'failure';

/** Both outcomes (the read sides' OpenAPI enum). */
export const EVENT_OUTCOMES = Object.keys({ success: true, failure: true } as const satisfies Record<
  EventOutcome,
  true
>) as readonly EventOutcome[];

/** The typed `details` of each event kind. */
export interface EventDetailsByType {
  /** An RFC 8693 exchange on the token endpoint (the hot path: recorded in batches). */
  'token.exchanged': { readonly resource: string | null; readonly oauth_error: string | null };
  /** An impersonation token issued or refused (the hot path: recorded in batches). */
  'impersonation.decided': { readonly audience: string | null; readonly oauth_error: string | null };
  'grant.created': {
    readonly permission_set_ids: readonly string[];
    readonly service_ids: readonly string[];
    readonly resource_ids: readonly string[];
    readonly valid_until: string | null;
  };
  'grant.replaced': {
    readonly permission_set_ids: readonly string[];
    readonly service_ids: readonly string[];
    readonly resource_ids: readonly string[];
    readonly valid_until: string | null;
  };
  'grant.revoked': Record<string, never>;
  'grant.expired': { readonly valid_until: string };
  /** The person declined an agent's authorization request on the consent page (RFC 6749 §4.1.2.1 `access_denied`); the RFC 8707 resources it named. */
  'consent.denied': { readonly resources: readonly string[] };
  'session.connected': { readonly scopes: readonly string[] };
  'session.refreshed': { readonly trigger: 'exchange' | 'proactive' | 'forced' };
  'session.needs_reauthentication': { readonly trigger: 'exchange' | 'proactive' | 'forced' };
  'session.disconnected': Record<string, never>;
  'approval.requested': ApprovalEventDetails;
  /** `remembered_approval_id`: the person's permanent decision that answered a backchannel request at once (actor: the broker). */
  'approval.approved': ApprovalEventDetails & {
    readonly persistence: string;
    readonly remembered_approval_id?: string;
  };
  'approval.denied': ApprovalEventDetails & { readonly remembered_approval_id?: string };
  'approval.consumed': ApprovalEventDetails;
  'approval.revoked': ApprovalEventDetails;
  'approval.expired': ApprovalEventDetails;
  /** A refused token exchange's link for the person (docs/authorization-requests.md); actor: the gateway. */
  'authorization_request.created': AuthorizationRequestEventDetails;
  /** The person allowed it and the connection is usable: the gateway's retry succeeds. */
  'authorization_request.completed': AuthorizationRequestEventDetails;
  'authorization_request.denied': AuthorizationRequestEventDetails;
  /** Its link expired unanswered (the broker's own work). */
  'authorization_request.expired': AuthorizationRequestEventDetails;
  /**
   * Someone other than its person opened the link (actor: the opener; recorded on the owner's activity). `opener`
   * names them in the details too, since a person's activity shows other principals' actor ids as null: the link is
   * the owner's, and they are told who tried it.
   */
  'authorization_request.misdirected': AuthorizationRequestEventDetails & { readonly opener: string };
  'client_credentials.issued': { readonly client_id: string };
  'client_credentials.rotated': { readonly client_id: string };
  'client_credentials.revoked': { readonly client_id: string };
  'signing_key.added': { readonly kid: string; readonly algorithm: string };
  'signing_key.promoted': { readonly kid: string };
  'signing_key.removed': { readonly kid: string };
  'agent.created': { readonly display_name: string };
  'agent.changed': { readonly display_name: string };
  'agent.deleted': Record<string, never>;
  /** An administrator suspended the agent: its tokens, exchanges and approvals are refused until it is resumed. */
  'agent.suspended': { readonly reason: string | null };
  /** An administrator resumed it; `reason` is the ended suspension's. */
  'agent.resumed': { readonly reason: string | null };
  'service.created': { readonly display_name: string };
  'service.changed': { readonly display_name: string };
  'service.deleted': Record<string, never>;
  'resource.created': { readonly resource_id: string; readonly display_name: string; readonly resource_uri: string };
  'resource.changed': { readonly resource_id: string; readonly display_name: string; readonly resource_uri: string };
  'resource.deleted': { readonly resource_id: string };
  'permission_set.created': { readonly permission_set_id: string; readonly name: string };
  'permission_set.changed': { readonly permission_set_id: string; readonly name: string };
  'permission_set.deleted': { readonly permission_set_id: string };
  /** A refresh token family started by an authorization code (OAuth 2.1 §4.3; never the token). */
  'refresh_token.issued': { readonly family_id: string };
  /** A refresh token of the family exchanged for its successor (rotation on every use). */
  'refresh_token.rotated': { readonly family_id: string };
  /** A rotated refresh token presented again (RFC 9700 §4.14.2): the family is revoked. */
  'refresh_token.reused': { readonly family_id: string };
  /** The family ended by its client (RFC 7009). */
  'refresh_token.revoked': { readonly family_id: string };
  /** An access token revoked by its client (RFC 7009); `jti` names it, never its value. */
  'access_token.revoked': { readonly jti: string };
  /**
   * A token issued or refused on an enterprise IdP's Identity Assertion JWT Authorization Grant (the person's
   * organisation allowed the agent; the hot path: recorded in batches). `authorization_id` is the tokens' `sid`.
   */
  'enterprise_access.decided': {
    readonly authorization_id: string | null;
    readonly issuer: string;
    readonly resource: string | null;
    readonly scopes: readonly string[];
    readonly oauth_error: string | null;
  };
  /** What the organisation allowed was revoked by the person or an admin: its tokens stop being active. */
  'enterprise_access.revoked': {
    readonly authorization_id: string;
    readonly issuer: string;
    readonly resource: string;
  };
}

/** What an approval event says about the tool call: its name, risk, argument names and a hash of the arguments, never their values. */
export interface ApprovalEventDetails {
  readonly approval_id: string;
  readonly tool_name: string;
  readonly risk_level: string | null;
  readonly argument_names: readonly string[];
  /** SHA-256 (hex) of the canonical JSON of the arguments: comparable, not reversible for any argument worth protecting. */
  readonly arguments_sha256: string;
}

/** What an authorization request event says: the request, the requested scopes and what it asks of the person. */
export interface AuthorizationRequestEventDetails {
  readonly authorization_request_id: string;
  readonly scopes: readonly string[];
  readonly needs_grant: boolean;
  readonly needs_connection: boolean;
}

export type EventType = keyof EventDetailsByType;

/**
 * Every kind once, in the order the README's table and the OpenAPI enum list them. `satisfies`
 * makes this object and `EventDetailsByType` agree: a kind added to one and not the other is a
 * compile error (a property missing, or an unknown one).
 */
const EVENT_KINDS = {
  'token.exchanged': true,
  'impersonation.decided': true,
  'grant.created': true,
  'grant.replaced': true,
  'grant.revoked': true,
  'grant.expired': true,
  'consent.denied': true,
  'session.connected': true,
  'session.refreshed': true,
  'session.needs_reauthentication': true,
  'session.disconnected': true,
  'approval.requested': true,
  'approval.approved': true,
  'approval.denied': true,
  'approval.consumed': true,
  'approval.revoked': true,
  'approval.expired': true,
  'authorization_request.created': true,
  'authorization_request.completed': true,
  'authorization_request.denied': true,
  'authorization_request.expired': true,
  'authorization_request.misdirected': true,
  'client_credentials.issued': true,
  'client_credentials.rotated': true,
  'client_credentials.revoked': true,
  'signing_key.added': true,
  'signing_key.promoted': true,
  'signing_key.removed': true,
  'agent.created': true,
  'agent.changed': true,
  'agent.deleted': true,
  'agent.suspended': true,
  'agent.resumed': true,
  'service.created': true,
  'service.changed': true,
  'service.deleted': true,
  'resource.created': true,
  'resource.changed': true,
  'resource.deleted': true,
  'permission_set.created': true,
  'permission_set.changed': true,
  'permission_set.deleted': true,
  'refresh_token.issued': true,
  'refresh_token.rotated': true,
  'refresh_token.reused': true,
  'refresh_token.revoked': true,
  'access_token.revoked': true,
  'enterprise_access.decided': true,
  'enterprise_access.revoked': true,
} as const satisfies Record<EventType, true>;

/** Every kind, once (the README lists them; a test checks the two agree), derived from `EVENT_KINDS`. */
export const EVENT_TYPES = Object.keys(EVENT_KINDS) as readonly EventType[];

/** One event of kind `K`, as it is recorded (`id` and `occurred_at` are given by the recorder). */
export interface BrokerEvent<K extends EventType = EventType> {
  readonly type: K;
  readonly actor: EventActor;
  /** The person whose delegation or data it concerns (shown on their activity page). */
  readonly principal: string | null;
  readonly agentId: string | null;
  readonly serviceId: string | null;
  readonly outcome: EventOutcome;
  /** The request's trace id (`traceresponse`), null for the broker's own background work. */
  readonly traceId: string | null;
  readonly details: EventDetailsByType[K];
}

/** Any event, with its details typed by its kind (a discriminated union over `type`). */
export type AnyBrokerEvent = { [K in EventType]: BrokerEvent<K> }[EventType];

/** A recorded event as the ledger stores and returns it. */
export type RecordedEvent = AnyBrokerEvent & {
  readonly id: string;
  /** Position in the ledger: the pagination cursor (newest first = highest). */
  readonly seq: string;
  readonly occurredAt: Date;
};
