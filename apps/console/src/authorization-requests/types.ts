import type { components } from '../api/user-api';

/** An authorization request as the person's API shows it (`GET /api/authorization-requests/{id}`). */
export type AuthorizationRequestView = components['schemas']['AuthorizationRequestView'];
/** The agent or the service of a request: name, description and logo. */
export type AuthorizationRequestParty = components['schemas']['AuthorizationRequestParty'];
