import { ClientCredentialsService } from '@broker/oauth-server';
import { NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentIdParam } from '../common/id.param';
import { ClientCredentialsMetadataResponse, IssuedClientCredentialsResponse, toClientCredentialsMetadataResponse, toIssuedClientCredentialsResponse } from './client-credentials.response';

@ApiTags('client-credentials')
@ApiSecurity('PrincipalHeader')
@Controller('api/agents/:agentId/client-credentials')
export class ClientCredentialsController {
  constructor(private readonly credentials: ClientCredentialsService) {}

  /** First call 201 with the secret; later calls rotate (200, previous_invalidated_at). */
  @Post()
  @NoBody()
  @ApiCreatedResponse({ type: IssuedClientCredentialsResponse, description: 'first credentials' })
  @ApiOkResponse({ type: IssuedClientCredentialsResponse, description: 'rotated; previous_invalidated_at set' })
  async generate(@Param() { agentId }: AgentIdParam, @Res({ passthrough: true }) response: Response): Promise<IssuedClientCredentialsResponse> {
    const issued = await this.credentials.generate(agentId);
    response.status(issued.created ? 201 : 200).setHeader('Cache-Control', 'no-store');
    return toIssuedClientCredentialsResponse(issued);
  }

  /** Metadata only, never the secret. */
  @Get()
  @ApiOkResponse({ type: ClientCredentialsMetadataResponse })
  async get(@Param() { agentId }: AgentIdParam): Promise<ClientCredentialsMetadataResponse> {
    return toClientCredentialsMetadataResponse(await this.credentials.metadata(agentId));
  }

  /** Irreversible. */
  @Delete()
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse()
  revoke(@Param() { agentId }: AgentIdParam): Promise<void> {
    return this.credentials.revoke(agentId);
  }
}
