import { TOKEN_BODY_LIMIT_BYTES, type HotRoute, type HotRouteAnswer } from '@broker/http';
import { isRelayed, TokenEndpoint, type TokenOutcome } from '@broker/oauth-server';
import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/**
 * The token endpoint's answer: ours carry `Cache-Control: no-store` (RFC 6749 §5.1); a
 * proxied answer is relayed with only its allowed headers.
 */
export function tokenAnswer(outcome: TokenOutcome): HotRouteAnswer {
  if (isRelayed(outcome)) return { status: outcome.status, headers: { ...outcome.headers }, body: outcome.body };
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' },
    body: JSON.stringify(outcome),
  };
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

  constructor(private readonly tokens: TokenEndpoint) {}

  async handle(request: IncomingMessage, body: Buffer): Promise<HotRouteAnswer> {
    return tokenAnswer(
      await this.tokens.handle(request.headers['content-type'], body, { authorization: request.headers.authorization }),
    );
  }
}
