import { ApiProperty } from '@nestjs/swagger';

/** When one agent last used one service for the caller ("last used" on the agents page). */
export class LastUsedView {
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  @ApiProperty({ format: 'uuid' })
  service_id!: string;
  /** The newest successful token exchange of the agent for the service on the caller's behalf. */
  @ApiProperty({ format: 'date-time' })
  last_used_at!: string;
}

/** Answer of `GET /api/activity/last-used`: one entry per agent and service ever used, the caller's only; a pair never used is absent. */
export class LastUsedListResponse {
  data!: LastUsedView[];
}
