import { NoBody } from '@broker/http';
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

  /** `{items}`, optionally only those covering `service_id`. */
  @Get()
  @ApiOkResponse({ type: PermissionSetListResponse })
  async list(@Query() { service_id }: PermissionSetQuery): Promise<PermissionSetListResponse> {
    return { items: (await this.permissionSets.list(service_id)).map(toPermissionSetResponse) };
  }

  @Post()
  @ApiCreatedResponse({ type: PermissionSetResponse })
  async create(@Body() body: PermissionSetDto): Promise<PermissionSetResponse> {
    return toPermissionSetResponse(await this.permissionSets.create(body));
  }

  @Get(':permissionSetId')
  @ApiOkResponse({ type: PermissionSetResponse })
  async get(@Param() { permissionSetId }: PermissionSetIdParam): Promise<PermissionSetResponse> {
    return toPermissionSetResponse(await this.permissionSets.get(permissionSetId));
  }

  @Put(':permissionSetId')
  @ApiOkResponse({ type: PermissionSetResponse })
  async replace(@Param() { permissionSetId }: PermissionSetIdParam, @Body() body: PermissionSetDto): Promise<PermissionSetResponse> {
    return toPermissionSetResponse(await this.permissionSets.replace(permissionSetId, body));
  }

  @Delete(':permissionSetId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse()
  remove(@Param() { permissionSetId }: PermissionSetIdParam): Promise<void> {
    return this.permissionSets.delete(permissionSetId);
  }
}
