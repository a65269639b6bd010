import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AgentIdParam } from '../common/id.param';
import { EnterpriseAuthorizationParams, EnterpriseAuthorizationQuery } from './enterprise-authorization.query';
import {
  AgentEnterpriseAuthorizationListResponse,
  toAgentEnterpriseAuthorizationResponse,
} from './enterprise-authorization.response';
import { AgentEnterpriseAuthorizationsService } from './enterprise-authorizations.service';

@ApiTags('agents')
@ApiSecurity('PrincipalHeader')
@Controller('api/agents/:agentId/enterprise-authorizations')
export class AgentEnterpriseAuthorizationsController {
  constructor(private readonly authorizations: AgentEnterpriseAuthorizationsService) {}

  /**
   * What people's organisations allowed the agent through their identity providers (Identity
   * Assertion JWT Authorization Grants): the live ones as `{items}`, newest first, optionally one
   * person's. 404 `agent not found` for an unknown agent.
   */
  @Get()
  @ApiOkResponse({ type: AgentEnterpriseAuthorizationListResponse })
  @ApiErrors('agent not found')
  async list(
    @Param() { agentId }: AgentIdParam,
    @Query() { principal }: EnterpriseAuthorizationQuery,
  ): Promise<AgentEnterpriseAuthorizationListResponse> {
    return {
      items: (await this.authorizations.live(agentId, principal)).map(toAgentEnterpriseAuthorizationResponse),
    };
  }

  /**
   * Revokes one of the agent's live enterprise authorizations: its tokens are no longer active on
   * introspection, at once. A new assertion from the identity provider allows the agent again:
   * change the identity provider's policy to stop that. 404 `agent not found` for an unknown agent,
   * `not_found` for an id that is not one of the agent's live authorizations.
   */
  @Delete(':authorizationId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'revoked' })
  @ApiErrors('agent not found', 'not_found')
  revoke(
    @Principal() admin: Principal,
    @Param() { agentId, authorizationId }: EnterpriseAuthorizationParams,
  ): Promise<void> {
    return this.authorizations.revoke(admin.id, agentId, authorizationId);
  }
}
