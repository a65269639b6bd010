import { Principal } from '@broker/auth';
import { ApiErrors } from '@broker/http';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ActivityNamesResponse } from './activity-names.response';
import { ActivityNamesService } from './activity-names.service';

@ApiTags('activity')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/activity/names')
export class ActivityNamesController {
  constructor(private readonly names: ActivityNamesService) {}

  /**
   * The names the caller's activity needs: every agent of the caller's own history (also those no longer
   * allowed, marked so), and the registered MCP servers with their scopes in words. Only the caller's agents.
   */
  @Get()
  @ApiOkResponse({ type: ActivityNamesResponse })
  @ApiErrors()
  list(@Principal() principal: Principal): Promise<ActivityNamesResponse> {
    return this.names.names(principal);
  }
}
