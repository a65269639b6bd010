import { ClientAuthenticated } from '@broker/auth';
import { OAuthErrors } from '@broker/http';
import { TokenLifecycleEndpoints } from '@broker/oauth-server';
import { Controller, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiOkResponse,
  ApiResponse,
  ApiSecurity,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { oauthErrorResponse } from './oauth-error-response';
import {
  IntrospectionRequest,
  IntrospectionResponseBody,
  LIFECYCLE_RESPONSE_HEADERS,
  RevocationRequest,
} from './token-lifecycle.dto';
import { introspectionAnswer, revocationAnswer } from './token-lifecycle.hot-routes';

const CHALLENGE = {
  'WWW-Authenticate': {
    description: '`Basic realm="oauth2", charset="UTF-8"` when the client tried HTTP Basic (RFC 6749 §5.2)',
    schema: { type: 'string' },
  },
};

/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) for the tokens the broker issues
 * itself (local mode, and local agents in hybrid mode). Both are served by hot routes before
 * Express (`RevocationHotRoute`, `IntrospectionHotRoute`); these routes answer the same way
 * when a query string makes a request miss them.
 */
@ApiTags('oauth2')
@Controller()
export class TokenLifecycleController {
  constructor(private readonly endpoints: TokenLifecycleEndpoints) {}

  /**
   * Revokes a token issued to the requesting client: a refresh token ends its whole family
   * (and the access tokens issued with it); an access token ends at once. An unknown,
   * malformed or expired token, or another client's, changes nothing and gets the same
   * 200 with an empty body. The body is `application/x-www-form-urlencoded`, at most
   * 256 KiB; a parameter sent twice is `invalid_request`.
   */
  @Post('oauth2/revoke')
  @ClientAuthenticated()
  @ApiSecurity('ClientSecretBasic')
  @ApiSecurity({})
  @ApiExtraModels(RevocationRequest)
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ schema: { $ref: getSchemaPath(RevocationRequest) } })
  @ApiOkResponse({ description: 'Done, or nothing to do (an empty body)', headers: LIFECYCLE_RESPONSE_HEADERS })
  @ApiResponse({
    status: 401,
    ...oauthErrorResponse(
      'Client authentication failed: unknown client, or a wrong or missing secret',
      ['invalid_client'],
      CHALLENGE,
    ),
  })
  @OAuthErrors('invalid_request')
  async revoke(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.endpoints.revoke(
      request.headers['content-type'],
      Buffer.isBuffer(request.body) ? request.body : undefined,
      request.headers.authorization,
    );
    const answer = revocationAnswer();
    response.status(answer.status).set(answer.headers).send(answer.body);
  }

  /**
   * Tells whether a token is active, and about it when it is. An agent learns about the
   * tokens issued to it; the gateway about any token of this broker; anything else is
   * exactly `{"active": false}`. Active means: signed by one of the broker's keys, not
   * expired, not revoked (nor its refresh token family), its agent still registered and,
   * for a person's token, the person's grant still active.
   */
  @Post('oauth2/introspect')
  @ClientAuthenticated()
  @ApiSecurity('ClientSecretBasic')
  @ApiSecurity({})
  @ApiExtraModels(IntrospectionRequest)
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ schema: { $ref: getSchemaPath(IntrospectionRequest) } })
  @ApiOkResponse({
    type: IntrospectionResponseBody,
    description: "The token's state (no `data` envelope)",
    headers: LIFECYCLE_RESPONSE_HEADERS,
  })
  @ApiResponse({
    status: 401,
    ...oauthErrorResponse(
      'The caller is not a confidential agent or the gateway, or its authentication failed',
      ['invalid_client'],
      CHALLENGE,
    ),
  })
  @OAuthErrors('invalid_request')
  async introspect(@Req() request: Request, @Res() response: Response): Promise<void> {
    const answer = introspectionAnswer(
      await this.endpoints.introspect(
        request.headers['content-type'],
        Buffer.isBuffer(request.body) ? request.body : undefined,
        request.headers.authorization,
      ),
    );
    response.status(answer.status).set(answer.headers).send(answer.body);
  }
}
