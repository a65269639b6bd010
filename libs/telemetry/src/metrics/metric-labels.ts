import type { OAuthErrorCode } from '@broker/domain';

/**
 * Every label value of the broker's metrics comes from one of these fixed sets,
 * chosen by the code; anything else is counted as `other`, so no caller can grow a
 * family's cardinality (no principal, token, agent or client id, URL or free text).
 */
export const OTHER = 'other';

/** `grant_type` of `broker_token_requests_total`: the grant types the broker knows, by short name. */
export const GRANT_TYPE_LABELS = [
  'token_exchange',
  'client_credentials',
  'authorization_code',
  'refresh_token',
  'jwt_bearer',
  'ciba',
  OTHER,
] as const;
export type GrantTypeLabel = (typeof GRANT_TYPE_LABELS)[number];

const GRANT_TYPES: ReadonlyMap<string, GrantTypeLabel> = new Map([
  ['urn:ietf:params:oauth:grant-type:token-exchange', 'token_exchange'],
  ['client_credentials', 'client_credentials'],
  ['authorization_code', 'authorization_code'],
  ['refresh_token', 'refresh_token'],
  ['urn:ietf:params:oauth:grant-type:jwt-bearer', 'jwt_bearer'],
  ['urn:openid:params:grant-type:ciba', 'ciba'],
]);

/** The label of a request's `grant_type` parameter (whatever the client sent: unknown values are `other`). */
export function grantTypeLabel(grantType: string | undefined): GrantTypeLabel {
  return (grantType === undefined ? undefined : GRANT_TYPES.get(grantType)) ?? OTHER;
}

/** Every OAuth error code the endpoints answer (libs/domain `OAuthErrorCode`); the compiler checks the list is complete. */
const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'invalid_target',
  'invalid_redirect_uri',
  'access_denied',
  'not_found',
  'server_error',
  'temporarily_unavailable',
  'invalid_dpop_proof',
  'use_dpop_nonce',
  'invalid_authorization_details',
  'unknown_user_id',
  'invalid_binding_message',
  'authorization_pending',
  'slow_down',
  'expired_token',
] as const satisfies readonly OAuthErrorCode[];
type Missing = Exclude<OAuthErrorCode, (typeof OAUTH_ERROR_CODES)[number]>;
const complete: [Missing] extends [never] ? true : Missing = true;
void complete;

/** `outcome` of the token endpoint's families: `ok` or an OAuth error code (RFC 6749 §5.2, RFC 8693 §2.2.2). */
export const TOKEN_OUTCOME_LABELS = ['ok', ...OAUTH_ERROR_CODES, OTHER] as const;
export type TokenOutcomeLabel = (typeof TOKEN_OUTCOME_LABELS)[number];
const TOKEN_OUTCOMES: ReadonlySet<string> = new Set(TOKEN_OUTCOME_LABELS);

/** The label of a token request's outcome: `ok`, the OAuth error code, or `other`. */
export function tokenOutcomeLabel(outcome: string): TokenOutcomeLabel {
  return TOKEN_OUTCOMES.has(outcome) ? (outcome as TokenOutcomeLabel) : OTHER;
}

/** `reason` of `broker_token_requests_unauthenticated_total`: the OAuth error code (RFC 6749 §5.2) or `other`. */
export const REFUSAL_LABELS = [...OAUTH_ERROR_CODES, OTHER] as const;
export type RefusalLabel = (typeof REFUSAL_LABELS)[number];
const REFUSALS: ReadonlySet<string> = new Set(REFUSAL_LABELS);

/** The label of a refusal's OAuth error code, or `other`. */
export function refusalLabel(code: string): RefusalLabel {
  return REFUSALS.has(code) ? (code as RefusalLabel) : OTHER;
}

/**
 * `grant` of `broker_token_requests_unauthenticated_total`: the RFC 8693 exchange of a
 * gateway, user impersonation (the same grant type, told apart by its request), or an
 * enterprise IdP's assertion (RFC 7523 JWT bearer grant) refused before it verified.
 */
export type UnauthenticatedGrant = 'token_exchange' | 'impersonation' | 'jwt_bearer';
export const UNAUTHENTICATED_GRANTS: readonly UnauthenticatedGrant[] = [
  'token_exchange',
  'impersonation',
  'jwt_bearer',
];

/** `server` of the HTTP histogram. */
export const SERVER_LABELS = ['enduser', 'admin'] as const;
export type ServerLabel = (typeof SERVER_LABELS)[number];

/** `method` of the HTTP histogram: the methods the broker routes; anything else is `other`. */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function methodLabel(method: string | undefined): string {
  return method !== undefined && METHODS.has(method) ? method : OTHER;
}

const STATUS_CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** `status_class` of the HTTP histogram: `2xx` … `5xx` (no allocation: a fixed table). */
export function statusClassLabel(status: number): string {
  return STATUS_CLASSES[Math.trunc(status / 100)] ?? OTHER;
}

/** The route label when no route matched (a 404, or a request a middleware answered). */
export const UNMATCHED_ROUTE = 'unmatched';

/** `outcome` of `broker_impersonation_decisions_total`. */
export type ImpersonationOutcome = 'allowed' | 'denied' | 'error';
export const IMPERSONATION_OUTCOMES: readonly ImpersonationOutcome[] = ['allowed', 'denied', 'error'];

/** `outcome` of `broker_vault_refreshes_total`. */
export type RefreshOutcome = 'refreshed' | 'reauthentication_required' | 'refresh_failed';
export const REFRESH_OUTCOMES: readonly RefreshOutcome[] = ['refreshed', 'reauthentication_required', 'refresh_failed'];

/**
 * `trigger` of the vault's refresh families: the token exchange found the token expiring
 * (`exchange`), an operator forced it (`forced`), or the proactive sweep (`proactive`).
 */
export type RefreshTrigger = 'exchange' | 'proactive' | 'forced';
export const REFRESH_TRIGGERS: readonly RefreshTrigger[] = ['exchange', 'proactive', 'forced'];

/** `kind` of `broker_provider_http_errors_total`: why a provider's token endpoint gave no usable answer. */
export type ProviderErrorKind = 'status' | 'timeout' | 'unreachable' | 'invalid_response' | 'other';
export const PROVIDER_ERROR_KINDS: readonly ProviderErrorKind[] = [
  'status',
  'timeout',
  'unreachable',
  'invalid_response',
  'other',
];

/** `cache` of `broker_cache_requests_total`. */
export type CacheName = 'verified_jwt' | 'client' | 'resource_catalog' | 'exchange_context' | 'token_state';
export const CACHE_NAMES: readonly CacheName[] = [
  'verified_jwt',
  'client',
  'resource_catalog',
  'exchange_context',
  'token_state',
];

/** RFC 7009: what a revocation ended (`none`: nothing, an unknown token or another client's). */
export type RevokedTokenType = 'access_token' | 'refresh_token' | 'none';
export const REVOKED_TOKEN_TYPES: readonly RevokedTokenType[] = ['access_token', 'refresh_token', 'none'];

/**
 * `key_set` of the key set families: which remote JWKS, by role (never its URL).
 * `trust_anchor`: the gateway's issuer (`token_exchange.client_assertion`: client assertions
 * and subject tokens); `upstream`: the upstream authorization server (proxy, hybrid);
 * `impersonation`: the impersonation rules' trusted issuers; `enterprise_idp`: the enterprise
 * IdPs whose Identity Assertion JWT Authorization Grants are accepted.
 */
export type KeySetName = 'trust_anchor' | 'upstream' | 'impersonation' | 'enterprise_idp';

/** `state` of `broker_db_pool_connections`. */
export const POOL_STATES = ['in_use', 'idle', 'waiting'] as const;
