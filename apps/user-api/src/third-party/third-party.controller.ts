import { MaybePrincipal, OptionalPrincipal, Principal } from '@broker/auth';
import { NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param, Post, Query, Redirect } from '@nestjs/common';
import { ApiFoundResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { RedirectTo } from '../common/redirect-to';
import { ConnectService, type CallbackQuery } from './connect.service';
import { ConnectQuery } from './connect-query.dto';
import { AffectedAgentsResponse, RefreshedSessionResponse, SessionDetailResponse, SessionListResponse, TerminatedSessionResponse } from './sessions.responses';
import { SessionsService } from './sessions.service';
import { ServiceIdParam } from './service-id-param.dto';

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

  /** Starts the connection: 302 to the provider with PKCE and a state token. */
  @Get(':serviceId/oauth2/authorize')
  @Redirect()
  @ApiFoundResponse({ description: 'to the provider authorization endpoint' })
  async authorize(@Principal() principal: Principal, @Param() { serviceId }: ServiceIdParam, @Query() { redirect_uri }: ConnectQuery): Promise<RedirectTo> {
    return { url: await this.connect.authorizationUrl(principal, serviceId, redirect_uri), statusCode: 302 };
  }

  /** The provider's redirect back; always a 302 (success to redirect_uri, failure to the sessions page). */
  @Get(':serviceId/oauth2/callback')
  @OptionalPrincipal()
  @Redirect()
  @ApiFoundResponse({ description: 'to redirect_uri on success, to the consent UI sessions page on failure' })
  async callback(@MaybePrincipal() principal: Principal | undefined, @Param('serviceId') serviceId: string, @Query() query: CallbackQuery): Promise<RedirectTo> {
    return { url: await this.connect.callback(principal, serviceId, query), statusCode: 302 };
  }

  @Get(':serviceId/session')
  @ApiOkResponse({ type: SessionDetailResponse })
  async detail(@Principal() principal: Principal, @Param() { serviceId }: ServiceIdParam): Promise<SessionDetailResponse> {
    return { data: await this.sessions.detail(principal, serviceId) };
  }

  /** Deletes the stored tokens (not revoked at the provider). */
  @Delete(':serviceId/session')
  @NoBody()
  @ApiOkResponse({ type: TerminatedSessionResponse })
  async terminate(@Principal() principal: Principal, @Param() { serviceId }: ServiceIdParam): Promise<TerminatedSessionResponse> {
    return { data: await this.sessions.terminate(principal, serviceId) };
  }

  @Get(':serviceId/session/affected-agents')
  @ApiOkResponse({ type: AffectedAgentsResponse })
  async affected(@Principal() principal: Principal, @Param() { serviceId }: ServiceIdParam): Promise<AffectedAgentsResponse> {
    return { data: { affected_agents: await this.sessions.affectedAgents(principal, serviceId) } };
  }

  /** Refreshes with the stored refresh token even if the access token is still valid. */
  @Post(':serviceId/session/refresh')
  @NoBody()
  @HttpCode(200)
  @ApiOkResponse({ type: RefreshedSessionResponse })
  async refresh(@Principal() principal: Principal, @Param() { serviceId }: ServiceIdParam): Promise<RefreshedSessionResponse> {
    return { data: await this.sessions.forceRefresh(principal, serviceId) };
  }
}
