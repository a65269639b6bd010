import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiError } from '@broker/domain';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AgentIdParam } from '../common/id.param';
import { AgentDto } from './agent.dto';
import { AgentResponse, toAgentResponse } from './agent.response';
import { AgentSuspensionResponse, toAgentSuspensionResponse } from './agent-suspension.response';
import { SuspendAgentDto } from './suspend-agent.dto';
import { AgentsService } from './agents.service';

@ApiTags('agents')
@ApiSecurity('PrincipalHeader')
@Controller('api/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  /** List all agents, as a bare array. */
  @Get()
  @ApiOkResponse({ type: [AgentResponse] })
  async list(): Promise<AgentResponse[]> {
    return (await this.agents.list()).map(toAgentResponse);
  }

  /**
   * Register an agent. 409 `conflict` when its `canonical_id` is taken; 400 `validation
   * failed` for a malformed `canonical_id`, a permission set listed twice or one that does not exist.
   */
  @Post()
  @ApiCreatedResponse({ type: AgentResponse })
  @ApiErrors('conflict', 'validation failed')
  async create(@Principal() admin: Principal, @Body() body: AgentDto): Promise<AgentResponse> {
    return toAgentResponse(await this.agents.create(admin.id, body));
  }

  /** Read one agent. */
  @Get(':agentId')
  @ApiOkResponse({ type: AgentResponse })
  @ApiErrors('agent not found')
  async get(@Param() { agentId }: AgentIdParam): Promise<AgentResponse> {
    return toAgentResponse(await this.agents.get(agentId));
  }

  /** Replace an agent wholesale: omitted fields become `null` or empty. Same rules as registration. */
  @Put(':agentId')
  @ApiOkResponse({ type: AgentResponse })
  @ApiErrors('agent not found', 'conflict', 'validation failed')
  async replace(
    @Principal() admin: Principal,
    @Param() { agentId }: AgentIdParam,
    @Body() body: AgentDto,
  ): Promise<AgentResponse> {
    return toAgentResponse(await this.agents.replace(admin.id, agentId, body));
  }

  /** The agent's suspension. 404 `not_found` when the agent is not suspended (`agent not found` when there is no agent). */
  @Get(':agentId/suspension')
  @ApiOkResponse({ type: AgentSuspensionResponse })
  @ApiErrors('agent not found', 'not_found')
  async suspension(@Param() { agentId }: AgentIdParam): Promise<AgentSuspensionResponse> {
    const { suspension } = await this.agents.get(agentId);
    if (suspension === null) throw new ApiError('not_found', `agent ${agentId} is not suspended`);
    return toAgentSuspensionResponse(suspension);
  }

  /**
   * Suspend an agent, reversibly: at once on every replica, its token requests, token
   * exchanges, approvals and consent are refused and its tokens are inactive on introspection,
   * while everything it holds (grants, connections, credentials, refresh tokens, remembered
   * decisions) is kept for its resumption. An agent suspended already keeps its suspension
   * (the original time, administrator and reason).
   */
  @Put(':agentId/suspension')
  @ApiOkResponse({ type: AgentSuspensionResponse })
  @ApiErrors('agent not found', 'validation failed')
  async suspend(
    @Principal() admin: Principal,
    @Param() { agentId }: AgentIdParam,
    @Body() body: SuspendAgentDto,
  ): Promise<AgentSuspensionResponse> {
    return toAgentSuspensionResponse(await this.agents.suspend(admin.id, agentId, body.reason));
  }

  /** Resume a suspended agent: everything it held works again. Idempotent: 204 when it was not suspended. */
  @Delete(':agentId/suspension')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'resumed (or was not suspended)' })
  @ApiErrors('agent not found')
  resume(@Principal() admin: Principal, @Param() { agentId }: AgentIdParam): Promise<void> {
    return this.agents.resume(admin.id, agentId);
  }

  /** Delete an agent. Irreversible: its grants and client credentials go with it. */
  @Delete(':agentId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiErrors('agent not found')
  remove(@Principal() admin: Principal, @Param() { agentId }: AgentIdParam): Promise<void> {
    return this.agents.delete(admin.id, agentId);
  }
}
