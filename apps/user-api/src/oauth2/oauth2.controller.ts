import { ClientAuthenticated, Principal, Public } from '@broker/auth';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { OAuthErrors } from '@broker/http';
import {
  AUTHORIZE_STRATEGY,
  AuthorizationServerMetadataService,
  DpopProofs,
  JWKS_SOURCE,
  TokenEndpoint,
  type AuthorizationServerMetadata,
  type AuthorizeStrategy,
  type JsonWebKeySet,
  type JwksSource,
} from '@broker/oauth-server';
import { Controller, Get, Header, Inject, Post, Redirect, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiFoundResponse,
  ApiHeader,
  ApiOkResponse,
  ApiResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RedirectTo } from '../common/redirect-to';
import { ApiAuthorizeQuery } from './authorize.query';
import { JsonWebKeySetResponse, JWKS_RESPONSE_HEADERS } from './jwks.response';
import { oauthErrorResponse, withConsolePage } from './oauth-error-response';
import { AuthorizationServerMetadataResponse, SERVER_METADATA_HEADERS } from './server-metadata.response';
import { TOKEN_REQUEST_MODELS, TOKEN_REQUEST_SCHEMA } from './token-request.dto';
import { TOKEN_RESPONSE_HEADERS, TokenResponse } from './token.response';
import { tokenAnswer, tokenRequestContext } from './token.hot-route';

/** The broker's OAuth2 authorization server endpoints (docs/oauth2.md). */
@ApiTags('oauth2')
@Controller()
export class OAuth2Controller {
  private readonly publicUrl: string;

  constructor(
    @Inject(AUTHORIZE_STRATEGY) private readonly authorizeStrategy: AuthorizeStrategy,
    @Inject(JWKS_SOURCE) private readonly jwks: JwksSource,
    private readonly tokens: TokenEndpoint,
    private readonly metadata: AuthorizationServerMetadataService,
    private readonly dpop: DpopProofs,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    this.publicUrl = config.server.enduser.public_url;
  }

  /**
   * Starts an authorization code request with PKCE (RFC 6749 §4.1, RFC 7636 S256) for the
   * signed-in user. Local and hybrid modes: with an active grant of the user to the agent,
   * a redirect to the redirect_uri with `code`, `state` and `iss` (RFC 9207); without one,
   * to the consent page, whose decision resumes this request. Proxy mode (and proxied agents
   * in hybrid mode): a redirect to the upstream authorization endpoint. A bad client,
   * redirect_uri, response_type or PKCE parameter is answered here as JSON (400), never at
   * a redirect_uri; a scope the agent may not have is `error=invalid_scope` at the
   * redirect_uri, a refused RFC 8707 `resource` `error=invalid_target` there (local), and a
   * proxied agent without an upstream client id `error=server_error`. Every redirect to the
   * redirect_uri, an error's as much as a code's, names the issuer (`iss`, RFC 9207 §2).
   * `prompt` is not read.
   */
  @Get('oauth2/authorize')
  @ApiSecurity('SessionAuth')
  @ApiSecurity('PrincipalHeader')
  @Redirect()
  @ApiAuthorizeQuery()
  @ApiFoundResponse({
    description:
      'To the redirect_uri (with `code` or `error`, and `iss`), to the consent page, or (proxy) to the upstream authorization endpoint',
    headers: {
      Location: {
        description: 'where the user agent goes next',
        required: true,
        schema: { type: 'string', format: 'uri' },
      },
    },
  })
  // Its JSON errors are all 400, `invalid_client` included (401 `invalid_client` is a missing user).
  // RFC 6749 §4.1.2.1: never redirected; a person's browser gets the console's page saying so, with the same status.
  @ApiResponse({
    status: 400,
    ...withConsolePage(
      oauthErrorResponse(
        'The request is refused without a redirect: bad client_id, redirect_uri, response_type or PKCE parameters',
        ['invalid_client', 'invalid_redirect_uri', 'invalid_request', 'unsupported_response_type'],
      ),
    ),
  })
  // docs/admin-api.md "Suspending an agent": answered to the person, never redirected to the agent.
  @ApiResponse({
    status: 403,
    ...withConsolePage(
      oauthErrorResponse('The agent is suspended by an administrator: nothing is sent to the redirect_uri', [
        'access_denied',
      ]),
    ),
  })
  async authorize(@Principal() principal: Principal, @Req() request: Request): Promise<RedirectTo> {
    return {
      url: await this.authorizeStrategy.authorize(principal, {
        query: request.query,
        originalUrl: `${this.publicUrl}${request.originalUrl}`,
      }),
      statusCode: 302,
    };
  }

  /**
   * Issues a token for one of the grants: `authorization_code` with PKCE, `client_credentials`
   * and RFC 8693 token exchange (a gateway's third-party exchange, or user impersonation in
   * local mode). The body is `application/x-www-form-urlencoded`, at most 256 KiB (else 400
   * `invalid_request` before parsing); a parameter sent twice is `invalid_request`, an unknown
   * one is ignored. Clients authenticate in the form (client_secret_post, client assertion)
   * or with HTTP Basic (client_secret_basic: `Authorization: Basic` of the form-encoded
   * client id and secret), never both. In proxy mode (and for proxied agents in hybrid mode)
   * an `authorization_code` request is forwarded upstream and the upstream's answer relayed
   * with only its Content-Type, Cache-Control, Pragma and WWW-Authenticate headers. Every
   * answer carries `Cache-Control: no-store`. Local grants and impersonation take a DPoP proof (RFC 9449): a
   * valid one makes the access token DPoP-bound (`token_type` `DPoP`, `cnf.jkt`), and a public client's refresh
   * token bound to the same key; a third-party token from the vault is returned as its provider issued it.
   */
  @Post('oauth2/token')
  @ClientAuthenticated()
  // HTTP Basic, or the credentials in the form (client_secret_post, client assertion, a public client's id): `{}`.
  @ApiSecurity('ClientSecretBasic')
  @ApiSecurity({})
  // Served by `TokenHotRoute` before Express; this route answers the same way when a query string makes the request miss it.
  @ApiExtraModels(...TOKEN_REQUEST_MODELS)
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({ schema: TOKEN_REQUEST_SCHEMA })
  @ApiHeader({
    name: 'DPoP',
    required: false,
    description:
      'A DPoP proof JWT (RFC 9449 §4) for this request (`htm` POST, `htu` the metadata token_endpoint): required for an agent registered with `dpop_bound_access_tokens`, for a code whose authorization request named `dpop_jkt`, and for a bound refresh token',
    schema: { type: 'string' },
  })
  @ApiOkResponse({
    type: TokenResponse,
    description: 'The token (no `data` envelope)',
    headers: TOKEN_RESPONSE_HEADERS,
  })
  @ApiResponse({
    status: 401,
    ...oauthErrorResponse(
      'Client authentication failed: unknown client, wrong or missing secret, or a client assertion that is not valid',
      ['invalid_client'],
      {
        'WWW-Authenticate': {
          description:
            '`Basic realm="oauth2", charset="UTF-8"` when the client tried HTTP Basic (RFC 6749 §5.2); in proxy mode, relayed when the upstream sent it',
          schema: { type: 'string' },
        },
      },
    ),
  })
  // 400: invalid_grant (code, PKCE, or no usable third-party session, with `error_uri`), invalid_target (no service owns
  // `resource`, no such impersonation target, impersonation outside local mode; RFC 8707: a `resource` outside the code's
  // resources or the resource policy); unauthorized_client as relayed from an
  // upstream (proxy). 403: the gateway or rule is not authorized, or no active grant or delegation (impersonation: `error_uri`).
  // RFC 9449: invalid_dpop_proof (a proof missing where required, or not valid), use_dpop_nonce (with a DPoP-Nonce header).
  // OpenID CIBA Core 1.0 §11 (the CIBA grant): authorization_pending, slow_down, expired_token, and access_denied as a
  // token error response's 400 (the person denied), so the 400 answer is written out with every code it may carry.
  @ApiResponse({
    status: 400,
    ...oauthErrorResponse(
      'The request is malformed or refused (RFC 6749 §5.2; OpenID CIBA Core 1.0 §11 for the CIBA grant, whose `access_denied` is a 400)',
      [
        'invalid_request',
        'invalid_grant',
        'unauthorized_client',
        'unsupported_grant_type',
        'invalid_scope',
        'invalid_target',
        'invalid_dpop_proof',
        'use_dpop_nonce',
        'authorization_pending',
        'slow_down',
        'expired_token',
        'access_denied',
      ],
      {
        'DPoP-Nonce': {
          description: 'With `use_dpop_nonce`: the nonce the next proof must carry (RFC 9449 §8)',
          schema: { type: 'string' },
        },
      },
    ),
  })
  @OAuthErrors(
    'invalid_request',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_grant_type',
    'invalid_scope',
    'invalid_target',
    'access_denied',
    'invalid_dpop_proof',
    'use_dpop_nonce',
    'authorization_pending',
    'slow_down',
    'expired_token',
  )
  async token(@Req() request: Request, @Res() response: Response): Promise<void> {
    const context = tokenRequestContext(request);
    const outcome = await this.tokens.handle(
      request.headers['content-type'],
      Buffer.isBuffer(request.body) ? request.body : undefined,
      context,
    );
    const answer = tokenAnswer(outcome, context.dpop === undefined ? undefined : this.dpop.nonceHeader());
    response.status(answer.status).set(answer.headers).send(answer.body);
  }

  /**
   * Publishes the public keys that verify the broker's tokens: its own signing keys (local),
   * the upstream's keys as republished (proxy), or both (hybrid). 503 while the upstream key
   * set was never fetched; 500 when a `kid` is both the broker's and the upstream's (hybrid).
   * Served by `JwksHotRoute` before Express, which refuses a request with a body (400
   * `invalid_request`).
   */
  @Get('oauth2/jwks.json')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOkResponse({ type: JsonWebKeySetResponse, description: 'The JWK set', headers: JWKS_RESPONSE_HEADERS })
  @OAuthErrors('invalid_request')
  keySet(): Promise<JsonWebKeySet> {
    return this.jwks.keySet();
  }

  /** Publishes the RFC 8414 authorization server metadata; the issuer is the broker's in every mode. */
  @Get('.well-known/oauth-authorization-server')
  @Public()
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOkResponse({
    type: AuthorizationServerMetadataResponse,
    description: 'The metadata',
    headers: SERVER_METADATA_HEADERS,
  })
  serverMetadata(): AuthorizationServerMetadata {
    return this.metadata.get();
  }
}
