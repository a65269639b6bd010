/**
 * Error codes of the OAuth2 endpoints (`{error, error_description[, error_uri]}`).
 * RFC 6749 §5.2, RFC 8693 §2.2.2, RFC 7591, RFC 9449, RFC 9396 §5, OpenID CIBA Core 1.0 §11 and §13, and the broker's
 * own authorize errors.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'access_denied'
  | 'not_found'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 9449 §5, §8: a DPoP proof that is missing where required or not valid; a proof without the server's nonce.
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // RFC 9396 §5: an authorization_details value that is not well formed or not allowed.
  | 'invalid_authorization_details'
  // OpenID CIBA Core 1.0 §13: the backchannel authentication endpoint's own refusals.
  | 'unknown_user_id'
  | 'invalid_binding_message'
  // OpenID CIBA Core 1.0 §11: the poll of the token endpoint while the person has not decided, too early, or too late.
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token';

/**
 * A failure of an OAuth2 endpoint. `description` is free text for the client and
 * must never carry credentials, keys, trust sources or rejected scopes.
 */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly errorUri?: string,
    /** A `WWW-Authenticate` challenge to send with the answer (RFC 6749 §5.2: a failed HTTP Basic client). */
    readonly challenge?: string,
    /** Other headers of the answer (RFC 9449 §8: the `DPoP-Nonce` to use). */
    readonly headers?: Readonly<Record<string, string>>,
    /**
     * Members added to the JSON answer after the standard ones (RFC 6749 §5.2 allows
     * extensions): a refused token exchange's `authorization_request`
     * (docs/authorization-requests.md). Never a credential.
     */
    readonly members?: Readonly<Record<string, unknown>>,
    /**
     * The HTTP status when the protocol fixes another than the code's usual one: OpenID CIBA Core
     * 1.0 §11's `access_denied` of a poll is a token error response's 400 (RFC 6749 §5.2).
     */
    readonly status?: 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/** The same refusal with `members` added to its answer (status, code, description and `error_uri` unchanged). */
export function withMembers(error: OAuthError, members: Readonly<Record<string, unknown>>): OAuthError {
  return new OAuthError(
    error.code,
    error.description,
    error.errorUri,
    error.challenge,
    error.headers,
    { ...error.members, ...members },
    error.status,
  );
}
