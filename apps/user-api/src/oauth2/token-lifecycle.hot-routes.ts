import { TOKEN_BODY_LIMIT_BYTES, type HotRoute, type HotRouteAnswer } from '@broker/http';
import { TokenLifecycleEndpoints, type IntrospectionResponse } from '@broker/oauth-server';
import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** RFC 7009 §2.2: 200 with an empty body, whatever became of the token. */
export function revocationAnswer(): HotRouteAnswer {
  return { status: 200, headers: { ...NO_STORE }, body: '' };
}

/** RFC 7662 §2.2: the JSON answer, never cached. */
export function introspectionAnswer(answer: IntrospectionResponse): HotRouteAnswer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', ...NO_STORE },
    body: JSON.stringify(answer),
  };
}

/** `POST /oauth2/revoke`, answered from node:http before Express (see `HotRoute`), as the token endpoint. */
@Injectable()
export class RevocationHotRoute implements HotRoute {
  readonly method = 'POST';
  readonly path = '/oauth2/revoke';
  readonly bodyLimitBytes = TOKEN_BODY_LIMIT_BYTES;

  constructor(private readonly endpoints: TokenLifecycleEndpoints) {}

  async handle(request: IncomingMessage, body: Buffer): Promise<HotRouteAnswer> {
    await this.endpoints.revoke(request.headers['content-type'], body, request.headers.authorization);
    return revocationAnswer();
  }
}

/** `POST /oauth2/introspect` on the hot path: resource servers and the gateway call it per request. */
@Injectable()
export class IntrospectionHotRoute implements HotRoute {
  readonly method = 'POST';
  readonly path = '/oauth2/introspect';
  readonly bodyLimitBytes = TOKEN_BODY_LIMIT_BYTES;

  constructor(private readonly endpoints: TokenLifecycleEndpoints) {}

  async handle(request: IncomingMessage, body: Buffer): Promise<HotRouteAnswer> {
    return introspectionAnswer(
      await this.endpoints.introspect(request.headers['content-type'], body, request.headers.authorization),
    );
  }
}
