import type { TokenResponse } from './access-token-issuer';
import type { TokenForm } from './token-form';

/** What a grant strategy gets besides the form. */
export interface TokenRequestContext {
  /** The `Authorization` header, for client authentication. */
  readonly authorization: string | undefined;
}

/** One grant type of `POST /oauth2/token`, with its own checks (RFC 6749 §4). */
export interface GrantStrategy {
  readonly grantType: string;
  handle(form: TokenForm, context: TokenRequestContext): Promise<TokenResponse>;
}

/** Injection token of the grant strategies bound for the configured mode. */
export const GRANT_STRATEGIES = Symbol('GRANT_STRATEGIES');
