import { ClientCredentialsService } from '@broker/oauth-server';
import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentIdParam } from '../common/id.param';
import {
  ClientCredentialsMetadataResponse,
  IssuedClientCredentialsResponse,
  RotatedClientCredentialsResponse,
  toClientCredentialsMetadataResponse,
  toIssuedClientCredentialsResponse,
} from './client-credentials.response';

/** The secret is in the answer: no cache may keep it (RFC 9111 §5.2.2.5). */
const NO_STORE = {
  'Cache-Control': { description: 'always `no-store`', schema: { type: 'string', enum: ['no-store'] } },
};

@ApiTags('client-credentials')
@ApiSecurity('PrincipalHeader')
@Controller('api/agents/:agentId/client-credentials')
export class ClientCredentialsController {
  constructor(private readonly credentials: ClientCredentialsService) {}

  /**
   * Generate or rotate the agent's client secret. The first call answers 201; later calls
   * rotate (200, with `previous_invalidated_at`): the old secret stops working at once.
   */
  @Post()
  @NoBody()
  @ApiCreatedResponse({ type: IssuedClientCredentialsResponse, description: 'first credentials', headers: NO_STORE })
  @ApiOkResponse({
    type: RotatedClientCredentialsResponse,
    description: 'rotated: a new secret, the previous one invalidated',
    headers: NO_STORE,
  })
  @ApiErrors('agent not found')
  async generate(
    @Principal() admin: Principal,
    @Param() { agentId }: AgentIdParam,
    @Res({ passthrough: true }) response: Response,
  ): Promise<IssuedClientCredentialsResponse | RotatedClientCredentialsResponse> {
    const issued = await this.credentials.generate(agentId, admin.id);
    response.status(issued.created ? 201 : 200).setHeader('Cache-Control', 'no-store');
    return toIssuedClientCredentialsResponse(issued);
  }

  /** Read the agent's client credentials metadata, never the secret. */
  @Get()
  @ApiOkResponse({ type: ClientCredentialsMetadataResponse })
  @ApiErrors('agent not found', 'client credentials not found')
  async get(@Param() { agentId }: AgentIdParam): Promise<ClientCredentialsMetadataResponse> {
    return toClientCredentialsMetadataResponse(await this.credentials.metadata(agentId));
  }

  /** Revoke the agent's client credentials. Irreversible: the secret stops working at once. */
  @Delete()
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'revoked' })
  @ApiErrors('agent not found', 'client credentials not found')
  revoke(@Principal() admin: Principal, @Param() { agentId }: AgentIdParam): Promise<void> {
    return this.credentials.revoke(agentId, admin.id);
  }
}
