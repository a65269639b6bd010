import { Principal } from '@broker/auth';
import { ApiErrors, NoBody } from '@broker/http';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ServiceIdParam } from '../common/id.param';
import { ServiceDto } from './service.dto';
import { ServiceResponse, toServiceResponse } from './service.response';
import { ServicesService } from './services.service';

@ApiTags('services')
@ApiSecurity('PrincipalHeader')
@Controller('api/services')
export class ServicesController {
  private readonly enduserPublicUrl: string;

  constructor(
    private readonly services: ServicesService,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    this.enduserPublicUrl = config.server.enduser.public_url;
  }

  /** List all services, as a bare array, secrets redacted. */
  @Get()
  @ApiOkResponse({ type: [ServiceResponse] })
  async list(): Promise<ServiceResponse[]> {
    return (await this.services.list()).map((service) => toServiceResponse(service, this.enduserPublicUrl));
  }

  /**
   * Register a third-party service. Endpoints not given are discovered from `issuer_uri`;
   * a failed discovery is 400 `validation failed` (the reason is only logged). 409 `conflict`
   * when a protected resource belongs to another service.
   */
  @Post()
  @ApiCreatedResponse({ type: ServiceResponse })
  @ApiErrors('conflict', 'validation failed')
  async create(@Principal() admin: Principal, @Body() body: ServiceDto): Promise<ServiceResponse> {
    return toServiceResponse(await this.services.create(admin.id, body), this.enduserPublicUrl);
  }

  /** Read one service, its secret redacted. */
  @Get(':serviceId')
  @ApiOkResponse({ type: ServiceResponse })
  @ApiErrors('service not found')
  async get(@Param() { serviceId }: ServiceIdParam): Promise<ServiceResponse> {
    return toServiceResponse(await this.services.get(serviceId), this.enduserPublicUrl);
  }

  /** Replace a service wholesale. An omitted `client_secret` keeps the stored one; otherwise the rules of registration apply. */
  @Put(':serviceId')
  @ApiOkResponse({ type: ServiceResponse })
  @ApiErrors('service not found', 'conflict', 'validation failed')
  async replace(
    @Principal() admin: Principal,
    @Param() { serviceId }: ServiceIdParam,
    @Body() body: ServiceDto,
  ): Promise<ServiceResponse> {
    return toServiceResponse(await this.services.replace(admin.id, serviceId, body), this.enduserPublicUrl);
  }

  /** Delete a service. 409 `conflict` while a permission set or an active grant references it. */
  @Delete(':serviceId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiErrors('service not found', 'conflict')
  remove(@Principal() admin: Principal, @Param() { serviceId }: ServiceIdParam): Promise<void> {
    return this.services.delete(admin.id, serviceId);
  }
}
