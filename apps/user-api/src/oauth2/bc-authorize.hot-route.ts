import { BACKCHANNEL_BODY_LIMIT_BYTES, type HotRoute, type HotRouteAnswer } from '@broker/http';
import { BackchannelAuthentication, type BackchannelAuthenticationResponse } from '@broker/oauth-server';
import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/** OpenID CIBA Core 1.0 §7.3: the answer, never cached (RFC 6749 §5.1's rule for credentials). */
export function backchannelAnswer(response: BackchannelAuthenticationResponse): HotRouteAnswer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' },
    body: JSON.stringify(response),
  };
}

/**
 * `POST /oauth2/bc-authorize` (OpenID CIBA Core 1.0 §7), answered from node:http before
 * Express like the token endpoint (see `HotRoute`); installed only with
 * `oauth2_authorization_server.ciba.enabled`. Bodies up to 2 MiB, so that an oversized
 * `authorization_details` gets RFC 9396 §5's error.
 */
@Injectable()
export class BackchannelAuthenticationHotRoute implements HotRoute {
  readonly method = 'POST';
  readonly path = '/oauth2/bc-authorize';
  readonly bodyLimitBytes = BACKCHANNEL_BODY_LIMIT_BYTES;

  constructor(private readonly backchannel: BackchannelAuthentication) {}

  async handle(request: IncomingMessage, body: Buffer): Promise<HotRouteAnswer> {
    return backchannelAnswer(
      await this.backchannel.handle(request.headers['content-type'], body, request.headers.authorization),
    );
  }
}
