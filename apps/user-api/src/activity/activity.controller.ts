import { Principal } from '@broker/auth';
import { ApiErrors } from '@broker/http';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ActivityQuery } from './activity.query';
import { ActivityListResponse } from './activity.response';
import { ActivityService } from './activity.service';

@ApiTags('activity')
@ApiSecurity('SessionAuth')
@ApiSecurity('PrincipalHeader')
@Controller('api/activity')
export class ActivityController {
  constructor(private readonly activity: ActivityService) {}

  /**
   * The caller's own activity, newest first: what agents did with their delegation and what
   * they did themselves. Cursor pagination (`cursor` = the previous page's `next_cursor`),
   * filters by agent, service, kind and time range; 400 `bad request` for a bad filter or cursor.
   */
  @Get()
  @ApiOkResponse({ type: ActivityListResponse })
  @ApiErrors('bad request')
  list(@Principal() principal: Principal, @Query() query: ActivityQuery): Promise<ActivityListResponse> {
    return this.activity.page(principal.id, query);
  }
}
