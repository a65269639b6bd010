import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { PermissionSetIdParam } from '../common/id.param';
import { PermissionSetDto, PermissionSetQuery } from './permission-set.dto';
import { PermissionSetListResponse, PermissionSetResponse, toPermissionSetResponse } from './permission-set.response';
import { PermissionSetsService } from './permission-sets.service';

@ApiTags('permission-sets')
@ApiSecurity('PrincipalHeader')
@Controller('api/permission-sets')
export class PermissionSetsController {
  constructor(private readonly permissionSets: PermissionSetsService) {}

  /** List permission sets as `{items}`, optionally only those covering `service_id` and/or `resource_id`. */
  @Get()
  @ApiOkResponse({ type: PermissionSetListResponse })
  async list(@Query() { service_id, resource_id }: PermissionSetQuery): Promise<PermissionSetListResponse> {
    return { items: (await this.permissionSets.list(service_id, resource_id)).map(toPermissionSetResponse) };
  }

  /**
   * Create a permission set. 409 `conflict` when its name is taken; 400 `validation failed`
   * when it covers no service and no protected resource, a service or resource is listed twice
   * or does not exist, or a resource does not offer a scope named.
   */
  @Post()
  @ApiCreatedResponse({ type: PermissionSetResponse })
  @ApiErrors('conflict', 'validation failed')
  async create(@Principal() admin: Principal, @Body() body: PermissionSetDto): Promise<PermissionSetResponse> {
    return toPermissionSetResponse(await this.permissionSets.create(admin.id, body));
  }

  /** Read one permission set. */
  @Get(':permissionSetId')
  @ApiOkResponse({ type: PermissionSetResponse })
  @ApiErrors('permission set not found')
  async get(@Param() { permissionSetId }: PermissionSetIdParam): Promise<PermissionSetResponse> {
    return toPermissionSetResponse(await this.permissionSets.get(permissionSetId));
  }

  /** Replace a permission set wholesale. Same rules as creation. */
  @Put(':permissionSetId')
  @ApiOkResponse({ type: PermissionSetResponse })
  @ApiErrors('permission set not found', 'conflict', 'validation failed')
  async replace(
    @Principal() admin: Principal,
    @Param() { permissionSetId }: PermissionSetIdParam,
    @Body() body: PermissionSetDto,
  ): Promise<PermissionSetResponse> {
    return toPermissionSetResponse(await this.permissionSets.replace(admin.id, permissionSetId, body));
  }

  /** Delete a permission set. 409 `conflict` while an agent is assigned it or an active grant delegates it. */
  @Delete(':permissionSetId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiErrors('permission set not found', 'conflict')
  remove(@Principal() admin: Principal, @Param() { permissionSetId }: PermissionSetIdParam): Promise<void> {
    return this.permissionSets.delete(admin.id, permissionSetId);
  }
}
