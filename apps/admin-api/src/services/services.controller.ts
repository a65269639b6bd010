import { NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ServiceIdParam } from '../common/id.param';
import { ServiceDto } from './service.dto';
import { ServiceResponse, toServiceResponse } from './service.response';
import { ServicesService } from './services.service';

@ApiTags('services')
@ApiSecurity('PrincipalHeader')
@Controller('api/services')
export class ServicesController {
  constructor(private readonly services: ServicesService) {}

  /** All services (bare array; secrets redacted). */
  @Get()
  @ApiOkResponse({ type: [ServiceResponse] })
  async list(): Promise<ServiceResponse[]> {
    return (await this.services.list()).map(toServiceResponse);
  }

  @Post()
  @ApiCreatedResponse({ type: ServiceResponse })
  async create(@Body() body: ServiceDto): Promise<ServiceResponse> {
    return toServiceResponse(await this.services.create(body));
  }

  @Get(':serviceId')
  @ApiOkResponse({ type: ServiceResponse })
  async get(@Param() { serviceId }: ServiceIdParam): Promise<ServiceResponse> {
    return toServiceResponse(await this.services.get(serviceId));
  }

  @Put(':serviceId')
  @ApiOkResponse({ type: ServiceResponse })
  async replace(@Param() { serviceId }: ServiceIdParam, @Body() body: ServiceDto): Promise<ServiceResponse> {
    return toServiceResponse(await this.services.replace(serviceId, body));
  }

  /** 409 while permission sets or grants reference the service. */
  @Delete(':serviceId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse()
  remove(@Param() { serviceId }: ServiceIdParam): Promise<void> {
    return this.services.delete(serviceId);
  }
}
