import { TOKEN_BODY_LIMIT_BYTES, type HotRoute, type HotRouteAnswer } from '@broker/http';
import {
  DpopProofs,
  isRelayed,
  TokenEndpoint,
  type TokenOutcome,
  type TokenRequestContext,
} from '@broker/oauth-server';
import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/**
 * The token endpoint's answer: ours carry `Cache-Control: no-store` (RFC 6749 §5.1), and the
 * next `DPoP-Nonce` when the request carried a proof and nonces are on (RFC 9449 §8.2); a
 * proxied answer is relayed with only its allowed headers.
 */
export function tokenAnswer(outcome: TokenOutcome, more?: Readonly<Record<string, string>>): HotRouteAnswer {
  if (isRelayed(outcome)) return { status: outcome.status, headers: { ...outcome.headers }, body: outcome.body };
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
  };
  return {
    status: 200,
    headers: more === undefined ? headers : { ...headers, ...more },
    body: JSON.stringify(outcome),
  };
}

/** The headers of a token request the grants read: client authentication, and the DPoP proof. */
export function tokenRequestContext(request: IncomingMessage): TokenRequestContext {
  return { authorization: request.headers.authorization, dpop: request.headers.dpop };
}

/**
 * `POST /oauth2/token` on the hot path (every agent tool call pays for it): answered from
 * node:http before Express (see `HotRoute`). Clients authenticate in the form or with
 * HTTP Basic; no principal is involved.
 */
@Injectable()
export class TokenHotRoute implements HotRoute {
  readonly method = 'POST';
  readonly path = '/oauth2/token';
  readonly bodyLimitBytes = TOKEN_BODY_LIMIT_BYTES;

  constructor(
    private readonly tokens: TokenEndpoint,
    private readonly dpop: DpopProofs,
  ) {}

  async handle(request: IncomingMessage, body: Buffer): Promise<HotRouteAnswer> {
    const context = tokenRequestContext(request);
    const outcome = await this.tokens.handle(request.headers['content-type'], body, context);
    return tokenAnswer(outcome, context.dpop === undefined ? undefined : this.dpop.nonceHeader());
  }
}
