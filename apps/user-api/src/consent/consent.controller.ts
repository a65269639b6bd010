import { Principal } from '@broker/auth';
import { NoBody } from '@broker/http';
import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AgentIdParam } from '../common/agent-id.param';
import { SessionTokenQuery } from '../common/session-token.query';
import { AgentDetailResponse, DelegationListResponse, DenialResponse } from './consent.responses';
import { ConsentService } from './consent.service';

@ApiTags('consent')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/consent/agents')
export class ConsentController {
  constructor(private readonly consent: ConsentService) {}

  /** Agents with an active grant of the caller, by display name then id. */
  @Get()
  @ApiOkResponse({ type: DelegationListResponse })
  async list(@Principal() principal: Principal): Promise<DelegationListResponse> {
    return { data: await this.consent.delegations(principal) };
  }

  /** Agent detail; with `session_token`, also the authorization context. */
  @Get(':agentId')
  @ApiOkResponse({ type: AgentDetailResponse })
  async detail(@Principal() principal: Principal, @Param() { agentId }: AgentIdParam, @Query() { session_token }: SessionTokenQuery): Promise<AgentDetailResponse> {
    return { data: await this.consent.agentDetail(principal, agentId, session_token) };
  }

  /**
   * The user declines the pending authorization request (`session_token`): answers the
   * client's redirect_uri with `error=access_denied` and its state, for the front end.
   */
  @Post(':agentId/deny')
  @NoBody()
  @HttpCode(200)
  @ApiOkResponse({ type: DenialResponse })
  async deny(@Principal() principal: Principal, @Param() { agentId }: AgentIdParam, @Query() { session_token }: SessionTokenQuery): Promise<DenialResponse> {
    return { data: { redirect_url: await this.consent.deny(principal, agentId, session_token) } };
  }
}
