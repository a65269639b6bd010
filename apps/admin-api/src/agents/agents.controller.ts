import { NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AgentIdParam } from '../common/id.param';
import { AgentDto } from './agent.dto';
import { AgentResponse, toAgentResponse } from './agent.response';
import { AgentsService } from './agents.service';

@ApiTags('agents')
@ApiSecurity('PrincipalHeader')
@Controller('api/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  /** All agents (bare array). */
  @Get()
  @ApiOkResponse({ type: [AgentResponse] })
  async list(): Promise<AgentResponse[]> {
    return (await this.agents.list()).map(toAgentResponse);
  }

  @Post()
  @ApiCreatedResponse({ type: AgentResponse })
  async create(@Body() body: AgentDto): Promise<AgentResponse> {
    return toAgentResponse(await this.agents.create(body));
  }

  @Get(':agentId')
  @ApiOkResponse({ type: AgentResponse })
  async get(@Param() { agentId }: AgentIdParam): Promise<AgentResponse> {
    return toAgentResponse(await this.agents.get(agentId));
  }

  /** Full replacement. */
  @Put(':agentId')
  @ApiOkResponse({ type: AgentResponse })
  async replace(@Param() { agentId }: AgentIdParam, @Body() body: AgentDto): Promise<AgentResponse> {
    return toAgentResponse(await this.agents.replace(agentId, body));
  }

  /** Irreversible: removes the agent's grants and client credentials with it. */
  @Delete(':agentId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse()
  remove(@Param() { agentId }: AgentIdParam): Promise<void> {
    return this.agents.delete(agentId);
  }
}
