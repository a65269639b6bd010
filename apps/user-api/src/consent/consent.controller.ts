import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
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

  /**
   * An agent as the consent page shows it, with the authorization context of a
   * `session_token`. The token must be valid, unexpired and issued for this agent (else
   * 400 `session_expired`) and for the caller (else 403 `forbidden`). A request already
   * answered is still shown, with `authorization_context.answered` (what was decided, when).
   */
  @Get(':agentId')
  @ApiOkResponse({ type: AgentDetailResponse })
  @ApiErrors('session_expired', 'forbidden', 'not_found')
  async detail(
    @Principal() principal: Principal,
    @Param() { agentId }: AgentIdParam,
    @Query() { session_token }: SessionTokenQuery,
  ): Promise<AgentDetailResponse> {
    return { data: await this.consent.agentDetail(principal, agentId, session_token) };
  }

  /**
   * Declines the pending authorization request of the `session_token`. Answers the
   * client's redirect_uri with `error=access_denied` and its state, for the front end.
   * Without a valid token of this agent and caller nothing is declined (400 `session_expired`,
   * 403 `forbidden`); nor when the redirect_uri is no longer registered or allowed (400
   * `invalid_redirect_uri`). A request is answered once: after Allow or Deny it is 409
   * `session_used`, naming the decision, and nothing is sent again.
   */
  @Post(':agentId/deny')
  @NoBody()
  @HttpCode(200)
  // Required to decline anything; a missing one is answered 400 `session_expired` like an invalid one.
  @ApiQuery({
    name: 'session_token',
    required: true,
    type: String,
    description: 'The authorization session token from the consent redirect of `/oauth2/authorize`.',
  })
  @ApiOkResponse({ type: DenialResponse })
  @ApiErrors('session_expired', 'forbidden', 'not_found', 'invalid_redirect_uri', 'session_used')
  async deny(
    @Principal() principal: Principal,
    @Param() { agentId }: AgentIdParam,
    @Query() { session_token }: SessionTokenQuery,
  ): Promise<DenialResponse> {
    return { data: { redirect_url: await this.consent.deny(principal, agentId, session_token) } };
  }

  /**
   * Ends an authorization request that expired before the person answered it, at the client's
   * redirect_uri with `error=access_denied` and its state (RFC 6749 §4.1.2.1) and `iss` (RFC 9207),
   * so the application hears back: the consent page's "Return to the application". The
   * `session_token` is accepted up to an hour past its expiry, for this agent and caller only
   * (else 400 `session_expired`, 403 `forbidden`); not when the redirect_uri is no longer
   * registered or allowed (400 `invalid_redirect_uri`); once only (then 409 `session_used`).
   */
  @Post(':agentId/expired')
  @NoBody()
  @HttpCode(200)
  @ApiQuery({
    name: 'session_token',
    required: true,
    type: String,
    description: 'The authorization session token from the consent redirect of `/oauth2/authorize`.',
  })
  @ApiOkResponse({ type: DenialResponse })
  @ApiErrors('session_expired', 'forbidden', 'not_found', 'invalid_redirect_uri', 'session_used')
  async expired(
    @Principal() principal: Principal,
    @Param() { agentId }: AgentIdParam,
    @Query() { session_token }: SessionTokenQuery,
  ): Promise<DenialResponse> {
    return { data: { redirect_url: await this.consent.expire(principal, agentId, session_token) } };
  }
}
