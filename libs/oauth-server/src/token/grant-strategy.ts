import type { TokenResponse } from './access-token-issuer';
import type { OAuthError } from '@broker/domain';
import type { TokenForm } from './token-form';

/** What a grant strategy gets besides the form. */
export interface TokenRequestContext {
  /** The `Authorization` header, for client authentication. */
  readonly authorization: string | undefined;
  /** The `DPoP` header (RFC 9449 §4.1): a proof of possession of the key the token is to be bound to. */
  readonly dpop?: string | string[] | undefined;
}

/** An upstream answer relayed as is (proxy mode): status, allowed headers, body bytes. */
export interface RelayedResponse {
  readonly kind: 'relayed';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** What a grant produces: a token response of ours, or an upstream answer to relay. */
export type TokenOutcome = TokenResponse | RelayedResponse;

export function isRelayed(outcome: TokenOutcome): outcome is RelayedResponse {
  return (outcome as { kind?: unknown }).kind === 'relayed';
}

/** One grant type of `POST /oauth2/token`, with its own checks (RFC 6749 §4). */
export interface GrantStrategy {
  readonly grantType: string;
  handle(form: TokenForm, context: TokenRequestContext): Promise<TokenOutcome>;
  /** Told when a request for this grant is refused before `handle` (a repeated parameter), to record it. */
  refusedBeforeHandling?(form: TokenForm, error: OAuthError): void;
}

/** Injection token of the grant strategies bound for the configured mode. */
export const GRANT_STRATEGIES = Symbol('GRANT_STRATEGIES');
