import { MaybePrincipal, OptionalPrincipal, Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param, Post, Query, Redirect } from '@nestjs/common';
import { ApiOkResponse, ApiParam, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiRedirectResponse } from '../common/redirect-response.decorator';
import type { RedirectTo } from '../common/redirect-to';
import { ConnectService, type CallbackQuery } from './connect.service';
import { ConnectQuery } from './connect-query.dto';
import {
  AffectedAgentsResponse,
  RefreshedSessionResponse,
  SessionDetailResponse,
  SessionListResponse,
  TerminatedSessionResponse,
} from './sessions.responses';
import { SessionsService } from './sessions.service';
import { ServiceIdParam } from './service-id-param.dto';

/** A callback query parameter: read as sent by the provider, never refused (every outcome is a redirect). */
function callbackQuery(name: string, description: string, required = false): MethodDecorator {
  return ApiQuery({ name, required, type: String, description });
}

@ApiTags('third-party')
@ApiSecurity('preAuth')
@Controller('api/third-party')
export class ThirdPartyController {
  constructor(
    private readonly connect: ConnectService,
    private readonly sessions: SessionsService,
  ) {}

  /** Every configured service with the caller's session (or null). */
  @Get('sessions')
  @ApiOkResponse({ type: SessionListResponse })
  async list(@Principal() principal: Principal): Promise<SessionListResponse> {
    return { data: await this.sessions.list(principal) };
  }

  /**
   * Starts connecting the service: 302 to the provider with PKCE and a state token. A
   * `redirect_uri` off the broker's public host is refused (400 `invalid_redirect_uri`).
   */
  @Get(':serviceId/oauth2/authorize')
  @Redirect()
  @ApiRedirectResponse('to the provider authorization endpoint')
  @ApiErrors('invalid_redirect_uri', 'service not found')
  async authorize(
    @Principal() principal: Principal,
    @Param() { serviceId }: ServiceIdParam,
    @Query() { redirect_uri }: ConnectQuery,
  ): Promise<RedirectTo> {
    return { url: await this.connect.authorizationUrl(principal, serviceId, redirect_uri), statusCode: 302 };
  }

  /**
   * The provider's redirect back; always a 302. Success goes to the connection's
   * `redirect_uri` with `success=true&service_id=<id>`. A failure stores nothing: without a
   * verified state it goes to the consent UI's sessions page with `error` and
   * `error_description`, after it back to the `redirect_uri` with `error`, `error_description`
   * and `service_id` (docs/consent-and-connections.md "Third-party connections and the token vault" lists the codes).
   */
  @Get(':serviceId/oauth2/callback')
  @OptionalPrincipal()
  // The principal is read when sent (the CSRF check), never required: without one the flow fails by redirect.
  @ApiSecurity({})
  @Redirect()
  // Any path segment: a foreign one fails as service_id_mismatch, by redirect.
  @ApiParam({ name: 'serviceId', type: String })
  // Listed bottom-up: the document shows state, code, error, error_description, iss.
  @callbackQuery('iss', "The provider's issuer (RFC 9207); when sent, it must be the service's issuer.")
  @callbackQuery(
    'error_description',
    "The provider's error text; never passed on or logged (the redirect carries the broker's own words).",
  )
  @callbackQuery('error', "The provider's error code (RFC 6749 §4.1.2.1), believed only with a valid state.")
  @callbackQuery('code', 'The authorization code (RFC 6749 §4.1.2); absent when the provider sends `error`.')
  @callbackQuery('state', 'The state token of the connection attempt (a JWE issued by the authorize step).', true)
  @ApiRedirectResponse(
    'to redirect_uri on success and on a failure after the state is verified (with error, error_description, service_id), else to the consent UI sessions page',
  )
  async callback(
    @MaybePrincipal() principal: Principal | undefined,
    @Param('serviceId') serviceId: string,
    @Query() query: CallbackQuery,
  ): Promise<RedirectTo> {
    return { url: await this.connect.callback(principal, serviceId, query), statusCode: 302 };
  }

  /** The caller's session with the service and the agents depending on it. */
  @Get(':serviceId/session')
  @ApiOkResponse({ type: SessionDetailResponse })
  @ApiErrors('service not found', 'not_found')
  async detail(
    @Principal() principal: Principal,
    @Param() { serviceId }: ServiceIdParam,
  ): Promise<SessionDetailResponse> {
    return { data: await this.sessions.detail(principal, serviceId) };
  }

  /** Deletes the stored tokens (not revoked at the provider). */
  @Delete(':serviceId/session')
  @NoBody()
  @ApiOkResponse({ type: TerminatedSessionResponse })
  @ApiErrors('service not found', 'not_found')
  async terminate(
    @Principal() principal: Principal,
    @Param() { serviceId }: ServiceIdParam,
  ): Promise<TerminatedSessionResponse> {
    return { data: await this.sessions.terminate(principal, serviceId) };
  }

  /** The agents that would lose access to the service if the session ended. */
  @Get(':serviceId/session/affected-agents')
  @ApiOkResponse({ type: AffectedAgentsResponse })
  @ApiErrors('service not found')
  async affected(
    @Principal() principal: Principal,
    @Param() { serviceId }: ServiceIdParam,
  ): Promise<AffectedAgentsResponse> {
    return { data: { affected_agents: await this.sessions.affectedAgents(principal, serviceId) } };
  }

  /**
   * Refreshes with the stored refresh token even if the access token is still valid. 409
   * `refresh_unavailable` without a usable refresh token, 502 `refresh_failed` when the
   * provider refuses or fails.
   */
  @Post(':serviceId/session/refresh')
  @NoBody()
  @HttpCode(200)
  @ApiOkResponse({ type: RefreshedSessionResponse })
  @ApiErrors('service not found', 'not_found', 'refresh_unavailable', 'refresh_failed')
  async refresh(
    @Principal() principal: Principal,
    @Param() { serviceId }: ServiceIdParam,
  ): Promise<RefreshedSessionResponse> {
    return { data: await this.sessions.forceRefresh(principal, serviceId) };
  }
}
