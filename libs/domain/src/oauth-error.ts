/**
 * Error codes of the OAuth2 endpoints (`{error, error_description[, error_uri]}`).
 * RFC 6749 §5.2, RFC 8693 §2.2.2, RFC 7591, RFC 9449, RFC 9396 and the broker's own authorize errors.
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
  // RFC 9396 §5: an `authorization_details` parameter that is malformed, of an unknown type or not allowed.
  | 'invalid_authorization_details';

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
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/** The same refusal with `members` added to its answer (status, code, description and `error_uri` unchanged). */
export function withMembers(error: OAuthError, members: Readonly<Record<string, unknown>>): OAuthError {
  return new OAuthError(error.code, error.description, error.errorUri, error.challenge, error.headers, {
    ...error.members,
    ...members,
  });
}
