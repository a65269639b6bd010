import { ClientAuthenticated, Principal, Public } from '@broker/auth';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { AUTHORIZE_STRATEGY, AuthorizationServerMetadataService, JWKS_SOURCE, TokenEndpoint, type AuthorizationServerMetadata, type AuthorizeStrategy, type JsonWebKeySet, type JwksSource } from '@broker/oauth-server';
import { Controller, Get, Header, Inject, Post, Redirect, Req, Res } from '@nestjs/common';
import { ApiFoundResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RedirectTo } from '../common/redirect-to';
import { tokenAnswer } from './token.hot-route';

/** The broker's OAuth2 authorization server endpoints (SPEC.md "Endpoints"). */
@ApiTags('oauth2')
@Controller()
export class OAuth2Controller {
  private readonly publicUrl: string;

  constructor(
    @Inject(AUTHORIZE_STRATEGY) private readonly authorizeStrategy: AuthorizeStrategy,
    @Inject(JWKS_SOURCE) private readonly jwks: JwksSource,
    private readonly tokens: TokenEndpoint,
    private readonly metadata: AuthorizationServerMetadataService,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    this.publicUrl = config.server.enduser.public_url;
  }

  /** Authorization code request (PKCE S256); the user is pre-authenticated by the proxy. */
  @Get('oauth2/authorize')
  @ApiSecurity('SessionAuth')
  @ApiSecurity('PrincipalHeader')
  @Redirect()
  @ApiFoundResponse({ description: 'to redirect_uri (code or error) or to the consent page' })
  async authorize(@Principal() principal: Principal, @Req() request: Request): Promise<RedirectTo> {
    return { url: await this.authorizeStrategy.authorize(principal, { query: request.query, originalUrl: `${this.publicUrl}${request.originalUrl}` }), statusCode: 302 };
  }

  /**
   * Token endpoint (form-encoded, 256 KiB). Served by `TokenHotRoute` before Express; this
   * route documents it (OpenAPI) and answers the same way when a query string makes the
   * request miss the hot route.
   */
  @Post('oauth2/token')
  @ClientAuthenticated()
  @ApiOkResponse({ description: 'token response (no data envelope)' })
  async token(@Req() request: Request, @Res() response: Response): Promise<void> {
    const outcome = await this.tokens.handle(request.headers['content-type'], Buffer.isBuffer(request.body) ? request.body : undefined, { authorization: request.headers.authorization });
    const answer = tokenAnswer(outcome);
    response.status(answer.status).set(answer.headers).send(answer.body);
  }

  /** Public signing keys. */
  @Get('oauth2/jwks.json')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOkResponse({ description: 'JWK set' })
  keySet(): Promise<JsonWebKeySet> {
    return this.jwks.keySet();
  }

  /** RFC 8414 metadata. */
  @Get('.well-known/oauth-authorization-server')
  @Public()
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOkResponse({ description: 'authorization server metadata' })
  serverMetadata(): AuthorizationServerMetadata {
    return this.metadata.get();
  }
}
