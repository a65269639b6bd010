/**
 * The API shapes both servers answer with or take (response and query classes with their
 * OpenAPI and validation decorators), so the end-user and admin applications, which never
 * import each other, describe the same thing once. Each application names its own schemas by
 * extending these (the OpenAPI documents are per server); a field only one server shows stays in
 * that application.
 */
export { EventActorResponse, LedgerEventResponse, toLedgerEventResponse } from './events/ledger-event.response';
export { EventFilterQuery, EventPageQuery } from './events/event-filter.query';
export {
  EnterpriseAuthorizationFields,
  toEnterpriseAuthorizationFields,
} from './enterprise/enterprise-authorization.response';
