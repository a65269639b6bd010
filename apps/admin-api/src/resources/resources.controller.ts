import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ResourceIdParam } from '../common/id.param';
import { ResourceDto } from './resource.dto';
import { ResourceListResponse, ResourceResponse, toResourceResponse } from './resource.response';
import { ResourcesService } from './resources.service';

/** Protected resources (MCP servers, APIs) the broker issues tokens for (docs/admin-api.md "Protected resources (MCP servers)"). */
@ApiTags('resources')
@ApiSecurity('PrincipalHeader')
@Controller('api/resources')
export class ResourcesController {
  constructor(private readonly resources: ResourcesService) {}

  /** List protected resources as `{items}`, oldest first. */
  @Get()
  @ApiOkResponse({ type: ResourceListResponse })
  async list(): Promise<ResourceListResponse> {
    return { items: (await this.resources.list()).map(toResourceResponse) };
  }

  /**
   * Register a protected resource. 409 `conflict` when another resource has its `resource_uri`
   * or a service lists it among its `protected_resources`; 400 `validation failed` when the URI
   * is outside `resource_indicators.allowed_resources`.
   */
  @Post()
  @ApiCreatedResponse({ type: ResourceResponse })
  @ApiErrors('conflict', 'validation failed')
  async create(@Principal() admin: Principal, @Body() body: ResourceDto): Promise<ResourceResponse> {
    return toResourceResponse(await this.resources.create(admin.id, body));
  }

  /** Read one protected resource. */
  @Get(':resourceId')
  @ApiOkResponse({ type: ResourceResponse })
  @ApiErrors('resource not found')
  async get(@Param() { resourceId }: ResourceIdParam): Promise<ResourceResponse> {
    return toResourceResponse(await this.resources.get(resourceId));
  }

  /** Replace a protected resource wholesale. The rules of registration apply; 409 `conflict` when it drops a scope a permission set names. */
  @Put(':resourceId')
  @ApiOkResponse({ type: ResourceResponse })
  @ApiErrors('resource not found', 'conflict', 'validation failed')
  async replace(
    @Principal() admin: Principal,
    @Param() { resourceId }: ResourceIdParam,
    @Body() body: ResourceDto,
  ): Promise<ResourceResponse> {
    return toResourceResponse(await this.resources.replace(admin.id, resourceId, body));
  }

  /** Delete a protected resource. 409 `conflict` while a permission set names it or an active grant delegates it. */
  @Delete(':resourceId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiErrors('resource not found', 'conflict')
  remove(@Principal() admin: Principal, @Param() { resourceId }: ResourceIdParam): Promise<void> {
    return this.resources.delete(admin.id, resourceId);
  }
}
