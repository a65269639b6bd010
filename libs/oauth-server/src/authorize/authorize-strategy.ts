import type { Principal } from '@broker/domain';

/** An authorization request as received (query parameters and the URL to resume it). */
export interface AuthorizationRequest {
  readonly query: Readonly<Record<string, unknown>>;
  /** The full `/oauth2/authorize` URL on the broker's public origin. */
  readonly originalUrl: string;
}

/**
 * `GET /oauth2/authorize` for one mode. Returns where to redirect the user; request errors
 * that must not redirect are thrown as `OAuthError` (JSON).
 */
export interface AuthorizeStrategy {
  authorize(principal: Principal, request: AuthorizationRequest): Promise<string>;
}

/** Injection token of the `AuthorizeStrategy` bound for the configured mode. */
export const AUTHORIZE_STRATEGY = Symbol('AUTHORIZE_STRATEGY');
