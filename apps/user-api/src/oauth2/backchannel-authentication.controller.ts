import { ClientAuthenticated } from '@broker/auth';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { OAuthErrors } from '@broker/http';
import { BackchannelAuthentication } from '@broker/oauth-server';
import { Controller, Inject, NotFoundException, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { backchannelAnswer } from './bc-authorize.hot-route';
import {
  BACKCHANNEL_RESPONSE_HEADERS,
  BackchannelAuthenticationRequest,
  BackchannelAuthenticationResponseBody,
} from './backchannel-authentication.dto';
import { oauthErrorResponse } from './oauth-error-response';

/** OpenID CIBA Core 1.0's backchannel authentication endpoint (docs/ciba.md "The endpoint"). */
@ApiTags('oauth2')
@Controller()
export class BackchannelAuthenticationController {
  private readonly enabled: boolean;

  constructor(
    private readonly backchannel: BackchannelAuthentication,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    this.enabled = config.oauth2_authorization_server.ciba.enabled;
  }

  /**
   * Asks the person named by `login_hint` to allow one tool call (`authorization_details`, RFC
   * 9396), out of band: the request becomes an approval the person decides on the console's
   * approval page (or a remembered decision answers it at once); the client then polls the token
   * endpoint with `grant_type=urn:openid:params:grant-type:ciba` and `auth_req_id` (poll mode
   * only). Local and hybrid modes with `oauth2_authorization_server.ciba.enabled`; otherwise
   * there is no such endpoint (404). Form-encoded, at most 2 MiB; a repeated parameter is
   * `invalid_request`. Checks in order: client authentication, unsupported parameters,
   * `authorization_details`, `scope`, `binding_message`, `requested_expiry`, the hint, the rate
   * limits. A hint naming nobody and a person who does not allow the agent get the same
   * `unknown_user_id` answer. Served by a hot route before Express; this route answers the same
   * way when a query string makes the request miss it.
   */
  @Post('oauth2/bc-authorize')
  @ClientAuthenticated()
  @ApiSecurity('ClientSecretBasic')
  @ApiSecurity({})
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ type: BackchannelAuthenticationRequest })
  @ApiOkResponse({
    type: BackchannelAuthenticationResponseBody,
    description: 'The request is stored (no `data` envelope)',
    headers: BACKCHANNEL_RESPONSE_HEADERS,
  })
  @ApiResponse({
    status: 401,
    ...oauthErrorResponse('Client authentication failed, or the agent is suspended', ['invalid_client'], {
      'WWW-Authenticate': {
        description: '`Basic realm="oauth2", charset="UTF-8"` when the client tried HTTP Basic (RFC 6749 §5.2)',
        schema: { type: 'string' },
      },
    }),
  })
  @ApiResponse({
    status: 403,
    ...oauthErrorResponse(
      'The gateway is not authorized (`access_denied`), or the agent gets its tokens upstream in hybrid mode (`unauthorized_client`)',
      ['access_denied', 'unauthorized_client'],
    ),
  })
  @ApiResponse({
    status: 429,
    ...oauthErrorResponse(
      'Too many requests for this person and agent (the approvals rate limits)',
      ['temporarily_unavailable'],
      { 'Retry-After': { description: 'seconds until a retry can succeed', schema: { type: 'integer', minimum: 1 } } },
    ),
  })
  // 400: invalid_authorization_details (RFC 9396 §5), invalid_scope, invalid_binding_message and unknown_user_id (CIBA §13).
  // 404 not_found: CIBA is not enabled (the answer of any unknown route).
  @OAuthErrors(
    'invalid_request',
    'invalid_authorization_details',
    'invalid_scope',
    'invalid_binding_message',
    'unknown_user_id',
    'not_found',
  )
  async authorize(@Req() request: Request, @Res() response: Response): Promise<void> {
    // Disabled: the same 404 as any unknown route.
    if (!this.enabled) throw new NotFoundException();
    const answer = backchannelAnswer(
      await this.backchannel.handle(
        request.headers['content-type'],
        Buffer.isBuffer(request.body) ? request.body : undefined,
        request.headers.authorization,
      ),
    );
    response.status(answer.status).set(answer.headers).send(answer.body);
  }
}
