import { ApprovalError } from '@broker/domain';
import { answersTo, ErrorVocabulary } from '@broker/http';
import { TokenVaultError } from '@broker/vault';

/** The message of a refused refresh token, as the sessions API states it. */
const RECONNECT = 'the provider refused the refresh token: reconnect the service';

/**
 * The end-user API's one vocabulary: each library refusal its routes can meet, and the wire
 * code it is answered with (codes are chosen at the edge: docs/architecture.md, "Errors");
 * the filter gives each code its status. Services throw the library's error as it is. Message,
 * field details and `Retry-After` pass through unchanged unless a message is given here:
 * docs/approvals.md states them, and they name only what the caller sent. The OAuth2 endpoints
 * answer in RFC 6749's vocabulary, chosen where each grant runs.
 */
export const USER_ERROR_VOCABULARY = new ErrorVocabulary([
  answersTo(ApprovalError, {
    // 400: `bad request` for every approvals validation failure (docs/approvals.md, "Errors") (gateways are written against it).
    invalid_input: 'bad request',
    // 401: missing or invalid gateway credentials.
    gateway_unauthenticated: 'unauthorized',
    // 403: the caller is known but may not do this.
    gateway_not_authorized: 'forbidden',
    agent_not_registered: 'forbidden',
    agent_suspended: 'forbidden',
    // The person's grant for the agent is what lets it ask: `grant_required`, a 403 of its own (docs/approvals.md).
    grant_required: 'grant_required',
    approval_of_another_principal: 'forbidden',
    approval_of_another_agent: 'forbidden',
    approval_not_found: 'not_found',
    // 410 for a pending approval past its TTL.
    approval_expired: 'gone',
    // 409: the approval's state no longer allows the decision.
    approval_not_pending: 'conflict',
    decision_raced: 'conflict',
    // 422: well-formed, but the approval's rules refuse it.
    pattern_invalid: 'invalid_pattern',
    pattern_with_once: 'invalid_pattern',
    not_consumable: 'not_consumable',
    not_revocable: 'not_revocable',
    // 429 with Retry-After (RFC 9110 §10.2.3).
    pending_limit_reached: 'rate_limited',
    request_rate_exceeded: 'rate_limited',
  }),
  // A forced refresh of a third-party session (POST /api/sessions/{service_id}/refresh).
  answersTo(TokenVaultError, {
    no_session: { error: 'not_found', message: (error) => `no session with service ${error.serviceId ?? ''}` },
    refresh_unavailable: 'refresh_unavailable',
    reauthentication_required: { error: 'refresh_failed', message: RECONNECT },
    refresh_failed: 'refresh_failed',
  }),
]);
