import { Principal } from '@broker/auth';
import { NoBody } from '@broker/http';
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
  async list(@Principal() principal: Principal, @Param() { agentId }: AgentIdParam): Promise<GrantListResponse> {
    return { data: (await this.grants.active(principal, agentId)).map(toGrantView) };
  }

  /** Creates or replaces the caller's grant (201); `{}` or `[]` deletes it (204). */
  @Post()
  @ApiSecurity('SessionAuth')
  @ApiSecurity('PrincipalHeader')
  @ApiCreatedResponse({ type: GrantResponse })
  @ApiNoContentResponse({ description: 'empty granted_permission_sets: grant deleted' })
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
    return result.redirectUrl === undefined ? { data: toGrantView(result.grant) } : { data: toGrantView(result.grant), redirect_url: result.redirectUrl };
  }

  /** Revokes the caller's grant; 404 when none. Third-party sessions stay. */
  @Delete()
  @NoBody()
  @HttpCode(204)
  @ApiSecurity('preAuth')
  @ApiNoContentResponse()
  revoke(@Principal() principal: Principal, @Param() { agentId }: AgentIdParam): Promise<void> {
    return this.grants.revoke(principal, agentId);
  }
}
