import { assertNever, type ApiErrorCode, type OAuthErrorCode } from '@broker/domain';

/** HTTP status of each end-user/admin error code (docs/http-api.md). */
export function apiStatus(code: ApiErrorCode): number {
  switch (code) {
    case 'bad request':
    case 'invalid request':
    case 'invalid request body':
    case 'validation failed':
    case 'session_expired':
    case 'invalid_permission_set':
    case 'invalid scopes':
    case 'invalid_redirect_uri':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
    case 'grant_required':
      return 403;
    case 'not_found':
    case 'agent not found':
    case 'service not found':
    case 'permission set not found':
    case 'resource not found':
    case 'signing key not found':
    case 'client credentials not found':
    case 'grant not found':
      return 404;
    case 'conflict':
    case 'session_used':
    case 'last_key':
    case 'current_key':
    case 'refresh_unavailable':
      return 409;
    case 'gone':
      return 410;
    case 'payload too large':
      return 413;
    case 'unsupported media type':
      return 415;
    case 'invalid_pattern':
    case 'not_consumable':
    case 'not_revocable':
      return 422;
    case 'rate_limited':
      return 429;
    case 'internal error':
      return 500;
    case 'refresh_failed':
      return 502;
    case 'service unavailable':
      return 503;
    default:
      return assertNever(code, 'API error code');
  }
}

/** HTTP status of each OAuth2 error code (RFC 6749 §5.2). */
export function oauthStatus(code: OAuthErrorCode): number {
  switch (code) {
    case 'invalid_request':
    case 'invalid_grant':
    case 'unauthorized_client':
    case 'unsupported_grant_type':
    case 'unsupported_response_type':
    case 'invalid_scope':
    case 'invalid_target':
    case 'invalid_redirect_uri':
    case 'invalid_dpop_proof':
    case 'use_dpop_nonce':
    case 'invalid_authorization_details':
    case 'unknown_user_id':
    case 'invalid_binding_message':
    case 'authorization_pending':
    case 'slow_down':
    case 'expired_token':
      return 400;
    case 'invalid_client':
      return 401;
    case 'access_denied':
      return 403;
    case 'not_found':
      return 404;
    case 'server_error':
      return 500;
    case 'temporarily_unavailable':
      return 503;
    default:
      return assertNever(code, 'OAuth error code');
  }
}
