import { ApiErrors } from '@broker/http';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminGrantQuery } from './admin-grant.query';
import { AdminGrantListResponse, toAdminGrantResponse } from './admin-grant.response';
import { AdminGrantsService } from './admin-grants.service';

@ApiTags('grants')
@ApiSecurity('PrincipalHeader')
@Controller('api/grants')
export class GrantsController {
  constructor(private readonly grants: AdminGrantsService) {}

  /**
   * Active grants across people as `{items}`, newest first, at most 500: filtered by person,
   * agent and service (combined with AND). 400 `invalid request` for a malformed id.
   */
  @Get()
  @ApiOkResponse({ type: AdminGrantListResponse })
  @ApiErrors('invalid request')
  async list(@Query() query: AdminGrantQuery): Promise<AdminGrantListResponse> {
    return { items: (await this.grants.list(query)).map(toAdminGrantResponse) };
  }
}
