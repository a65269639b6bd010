import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentIdParam } from '../common/agent-id.param';
import { SessionTokenQuery } from '../common/session-token.query';
import { GrantDto } from './grant.dto';
import { GrantListResponse, GrantResponse, toGrantView } from './grant.response';
import { GrantsService } from './grants.service';

@ApiTags('grants')
@Controller('api/consent/agents/:agentId/grants')
export class GrantsController {
  constructor(private readonly grants: GrantsService) {}

  /** The caller's active grant for the agent, as a list of zero or one. */
  @Get()
  @ApiSecurity('SessionAuth')
  @ApiSecurity('PrincipalHeader')
  @ApiOkResponse({ type: GrantListResponse })
  @ApiErrors('not_found')
  async list(@Principal() principal: Principal, @Param() { agentId }: AgentIdParam): Promise<GrantListResponse> {
    return { data: (await this.grants.active(principal, agentId)).map(toGrantView) };
  }

  /**
   * Creates, replaces or deletes the caller's grant for the agent. 201 with the grant
   * (and `redirect_url` with a `session_token`); `{}` or `[]` deletes it, 204. Every
   * permission set must be assigned to the agent and every service part of it (400
   * `invalid_permission_set`), every delegated service must get a scope (400 `invalid scopes`);
   * a `session_token` must be valid for this agent (400 `session_expired`) and the caller
   * (403 `forbidden`), and not yet answered (409 `session_used`, naming the decision: a
   * request is answered once, so never a second `redirect_url`).
   */
  @Post()
  @ApiSecurity('SessionAuth')
  @ApiSecurity('PrincipalHeader')
  @ApiCreatedResponse({ type: GrantResponse })
  @ApiNoContentResponse({ description: 'empty granted_permission_sets: grant deleted' })
  @ApiErrors('not_found', 'session_expired', 'forbidden', 'invalid_permission_set', 'invalid scopes', 'session_used')
  async write(
    @Principal() principal: Principal,
    @Param() { agentId }: AgentIdParam,
    @Query() { session_token }: SessionTokenQuery,
    @Body() body: GrantDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<GrantResponse | undefined> {
    const result = await this.grants.write(principal, agentId, body, session_token);
    if (result.kind === 'deleted') {
      response.status(204);
      return undefined;
    }
    response.status(201);
    return result.redirectUrl === undefined
      ? { data: toGrantView(result.grant) }
      : { data: toGrantView(result.grant), redirect_url: result.redirectUrl };
  }

  /**
   * Revokes the caller's active grant for the agent. Every tool approval of the caller and
   * agent still in force (pending requests, remembered approvals and denials) ends with it;
   * third-party sessions stay. 404 `not_found` when there is none.
   */
  @Delete()
  @NoBody()
  @HttpCode(204)
  @ApiSecurity('preAuth')
  @ApiNoContentResponse({ description: 'grant revoked' })
  @ApiErrors('not_found')
  revoke(@Principal() principal: Principal, @Param() { agentId }: AgentIdParam): Promise<void> {
    return this.grants.revoke(principal, agentId);
  }
}
