import type { HotRoute, HotRouteAnswer } from '@broker/http';
import { JWKS_SOURCE, type JsonWebKeySet, type JwksSource } from '@broker/oauth-server';
import { Inject, Injectable } from '@nestjs/common';

/**
 * `GET /oauth2/jwks.json` on the hot path: the document's bytes are prepared once per key
 * set (the sources hand out the same object until their keys change) and served as is.
 */
@Injectable()
export class JwksHotRoute implements HotRoute {
  readonly method = 'GET';
  readonly path = '/oauth2/jwks.json';
  readonly bodyLimitBytes = 0;
  private prepared: { set: JsonWebKeySet; bytes: Buffer } | undefined;

  constructor(@Inject(JWKS_SOURCE) private readonly jwks: JwksSource) {}

  async handle(): Promise<HotRouteAnswer> {
    const set = await this.jwks.keySet();
    if (this.prepared?.set !== set) this.prepared = { set, bytes: Buffer.from(JSON.stringify(set)) };
    return { status: 200, headers: JWKS_HEADERS, body: this.prepared.bytes };
  }
}

/** `Cache-Control: public, max-age=300`. */
export const JWKS_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'public, max-age=300',
};
