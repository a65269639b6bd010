import { Injectable } from '@nestjs/common';
import { withBasicChallenge } from '../token/token-endpoint';
import { TokenIntrospection, type IntrospectionResponse } from './token-introspection';
import { TokenRevocation } from './token-revocation';

const BASIC = /^basic /i;

/**
 * `POST /oauth2/revoke` and `POST /oauth2/introspect` as the HTTP layer calls them: the form
 * body as received and the `Authorization` header. A client that tried HTTP Basic and
 * failed gets the `WWW-Authenticate` challenge of that scheme (RFC 6749 §5.2), as at the
 * token endpoint.
 */
@Injectable()
export class TokenLifecycleEndpoints {
  constructor(
    private readonly revocation: TokenRevocation,
    private readonly introspection: TokenIntrospection,
  ) {}

  revoke(contentType: string | undefined, body: Buffer | undefined, authorization: string | undefined): Promise<void> {
    return challenged(authorization, this.revocation.revoke(contentType, body, authorization));
  }

  introspect(
    contentType: string | undefined,
    body: Buffer | undefined,
    authorization: string | undefined,
  ): Promise<IntrospectionResponse> {
    return challenged(authorization, this.introspection.introspect(contentType, body, authorization));
  }
}

function challenged<T>(authorization: string | undefined, work: Promise<T>): Promise<T> {
  if (authorization === undefined || !BASIC.test(authorization)) return work;
  return work.catch((error: unknown) => {
    throw withBasicChallenge(error);
  });
}
