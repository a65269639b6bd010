import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AgentIdParam } from '../common/id.param';
import { AgentGrantParams } from './admin-grant.query';
import { AdminGrantListResponse, RevokedGrantsResponse, toAdminGrantResponse } from './admin-grant.response';
import { AdminGrantsService } from './admin-grants.service';

@ApiTags('grants')
@ApiSecurity('PrincipalHeader')
@Controller('api/agents/:agentId/grants')
export class AgentGrantsController {
  constructor(private readonly grants: AdminGrantsService) {}

  /** People's active grants to the agent as `{items}`, newest first (at most 500). */
  @Get()
  @ApiOkResponse({ type: AdminGrantListResponse })
  @ApiErrors('agent not found')
  async list(@Param() { agentId }: AgentIdParam): Promise<AdminGrantListResponse> {
    return { items: (await this.grants.ofAgent(agentId)).map(toAdminGrantResponse) };
  }

  /**
   * Revokes every active grant of the agent (an incident): each as its person's own revocation
   * would (refresh tokens ended, remembered tool decisions ended, token exchange refused at once),
   * the administrator the actor. Access tokens already issued run to their expiry; to stop the agent
   * entirely, suspend it. Answers how many were revoked.
   */
  @Delete()
  @NoBody()
  @ApiOkResponse({ type: RevokedGrantsResponse })
  @ApiErrors('agent not found')
  async revokeAll(@Principal() admin: Principal, @Param() { agentId }: AgentIdParam): Promise<RevokedGrantsResponse> {
    return { revoked: await this.grants.revokeAll(admin.id, agentId) };
  }

  /** Revokes one person's active grant to the agent, as their own revocation would, the administrator the actor. */
  @Delete(':grantId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'revoked' })
  @ApiErrors('agent not found', 'grant not found')
  revoke(@Principal() admin: Principal, @Param() { agentId, grantId }: AgentGrantParams): Promise<void> {
    return this.grants.revoke(admin.id, agentId, grantId);
  }
}
