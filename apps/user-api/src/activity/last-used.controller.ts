import { Principal } from '@broker/auth';
import { ApiErrors } from '@broker/http';
import { EventRepository } from '@broker/persistence';
import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { LastUsedListResponse } from './last-used.response';

@ApiTags('activity')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/activity/last-used')
export class LastUsedController {
  constructor(private readonly events: EventRepository) {}

  /**
   * When each of the caller's agents last used each service: the newest successful token
   * exchange per agent and service in the caller's activity (the agents
   * page's "last used"). Only the caller's own; a pair never used (or used only before the
   * retention period) is absent.
   */
  @Get()
  @ApiOkResponse({ type: LastUsedListResponse })
  @ApiErrors()
  async list(@Principal() principal: Principal): Promise<LastUsedListResponse> {
    const rows = await this.events.lastUsed(principal.id);
    return {
      data: rows.map((row) => ({
        agent_id: row.agentId,
        service_id: row.serviceId,
        last_used_at: row.lastUsedAt.toISOString(),
      })),
    };
  }
}
