import { ClientCredentialsService, type IssuedClientCredentials } from '@broker/oauth-server';
import { NoBody } from '@broker/http';
import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentIdParam } from '../common/id-params';

export class IssuedClientCredentialsResponse {
  client_id!: string;
  /** Shown once; only its SHA-256 digest is stored. */
  client_secret!: string;
  created_at!: string;
  /** Present on rotation: when the previous secret stopped working. */
  previous_invalidated_at?: string;
}

export class ClientCredentialsMetadataResponse {
  client_id!: string;
  created_at!: string;
  rotated_at!: string | null;
}

function toIssued(issued: IssuedClientCredentials): IssuedClientCredentialsResponse {
  const response: IssuedClientCredentialsResponse = { client_id: issued.clientId, client_secret: issued.clientSecret, created_at: issued.createdAt.toISOString() };
  if (issued.previousInvalidatedAt) response.previous_invalidated_at = issued.previousInvalidatedAt.toISOString();
  return response;
}

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
    return toIssued(issued);
  }

  /** Metadata only, never the secret. */
  @Get()
  @ApiOkResponse({ type: ClientCredentialsMetadataResponse })
  async get(@Param() { agentId }: AgentIdParam): Promise<ClientCredentialsMetadataResponse> {
    const metadata = await this.credentials.metadata(agentId);
    return { client_id: metadata.clientId, created_at: metadata.createdAt.toISOString(), rotated_at: metadata.rotatedAt?.toISOString() ?? null };
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
