import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { OverviewResponse } from './overview.response';
import { OverviewService } from './overview.service';

@ApiTags('overview')
@ApiSecurity('PrincipalHeader')
@Controller('api/overview')
export class OverviewController {
  constructor(private readonly overviews: OverviewService) {}

  /**
   * The broker at a glance: health and mode, how many agents, services, MCP servers, permission
   * sets, active grants and pending approvals, the live signing keys and their ages, warnings an
   * operator must act on, and the ten newest administrators' actions.
   */
  @Get()
  @ApiOkResponse({ type: OverviewResponse })
  overview(): Promise<OverviewResponse> {
    return this.overviews.overview();
  }
}
