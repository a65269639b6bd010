/**
 * The activity ledger (docs/events.md): the business events of the broker, one
 * append-only record of who did what with whose delegation, for the people it concerns (their
 * activity page, `GET /api/activity`), for administrators (`GET /api/events` and its NDJSON
 * export) and for webhooks. This lib owns:
 * - the catalogue: every kind and its typed details, the list of kinds derived from it
 *   (a kind missing on either side does not compile; `npm run lint` checks it);
 * - the builders: one function per happening that turns it into an event (`adminEvent`,
 *   `approvalEvent`, ...);
 * - recording: `EventLedger` (in the change's transaction, or queued on the hot path) and
 *   `recordChange` (a repository's in-transaction hook);
 * - retention: `EventRetention`, the job deleting events older than `events.retention`;
 * - the read sides' one query (`EventQuery`, its limit, cursor and kind rules, and
 *   `eventFilter`), which the end-user and admin servers both take.
 * What stays in libs/persistence: the `events` table's schema (its migrations) and its SQL
 * (`EventRepository`: appends with the webhook outbox in one statement, pages, purges), as for
 * every table; it implements `EventStore` for the ledger and `EventPurge` for retention, and the
 * persistence module provides both with it.
 *
 * The ledger and the audit log (@broker/audit) record some of the same happenings for
 * different readers. The audit log is the operator's: structured log lines (`audit: true`),
 * written at once by the process for every attempt, an unauthenticated refusal included,
 * kept wherever the logs go, never shown to end users. The ledger is the product's: rows in
 * the database, written with the change they describe (or batched on the hot path), only for
 * authenticated requests and state changes, typed per kind, kept for `events.retention`, and
 * read back by the person, the administrator and webhook receivers. Both exist because one is
 * for operating the deployment and the other is a feature of it; neither holds a credential
 * (docs/security.md "What never leaks").
 */
export {
  EVENT_ACTOR_TYPES,
  EVENT_OUTCOMES,
  EVENT_TYPES,
  type AnyBrokerEvent,
  type ApprovalEventDetails,
  type AuthorizationRequestEventDetails,
  type BrokerEvent,
  type EventActor,
  type EventActorType,
  type EventDetailsByType,
  type EventOutcome,
  type EventType,
  type RecordedEvent,
} from './catalogue/event-catalogue';
export { adminEvent, firstSigningKeyAdded, type AdminEventSubject } from './builders/admin-events';
export {
  consentDenied,
  enterpriseAccessRevoked,
  grantEvent,
  sessionConnected,
  sessionDisconnected,
  sessionRefreshEvent,
  type RevokedEnterpriseAccess,
  type SessionRefreshTrigger,
} from './builders/person-events';
export {
  accessTokenRevoked,
  impersonationDecided,
  enterpriseAccessDecided,
  type EnterpriseAccessSubject,
  refreshTokenEvent,
  tokenExchanged,
  type ExchangeSubject,
  type ImpersonationSubject,
  type RefreshFamily,
} from './builders/token-events';
export {
  approvalEvent,
  approvalAnsweredByRemembered,
  approvalEventDetails,
  approvalExpired,
  type ApprovalEventType,
} from './builders/approval-events';
export {
  authorizationRequestEvent,
  authorizationRequestMisdirected,
  type AuthorizationRequestEventType,
  type AuthorizationRequestFacts,
} from './builders/authorization-request-events';
export { EventLedger, type EventSettings } from './recording/event-ledger';
export type { EventPurge, EventStore, EventToAppend } from './recording/event-store';
export { recordChange } from './recording/record-change';
export { EventRetention } from './retention/event-retention';
export {
  DEFAULT_EVENT_LIMIT,
  EVENT_CURSOR,
  EVENT_CURSOR_MESSAGE,
  EVENT_TYPE_MESSAGE,
  MAX_EVENT_LIMIT,
  decimalLimit,
  eventFilter,
  eventTypeList,
  type EventFilter,
  type EventPage,
  type EventQuery,
} from './reading/event-query';
