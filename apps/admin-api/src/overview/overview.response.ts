import { ApiProperty } from '@nestjs/swagger';
import { EventResponse } from '../events/event.response';
import { OVERVIEW_WARNING_CODES, type OverviewWarningCode } from './overview-warnings';

/** How much the broker holds. */
export class OverviewCountsResponse {
  @ApiProperty({ example: 12 })
  agents!: number;
  @ApiProperty({ example: 1 })
  suspended_agents!: number;
  /** Third-party services. */
  @ApiProperty({ example: 4 })
  services!: number;
  /** Protected resources (MCP servers). */
  @ApiProperty({ example: 3 })
  resources!: number;
  @ApiProperty({ example: 5 })
  permission_sets!: number;
  /** Grants of people to agents whose `valid_until` has not passed. */
  @ApiProperty({ example: 840 })
  active_grants!: number;
  /** Tool approvals waiting for a person's decision. */
  @ApiProperty({ example: 2 })
  pending_approvals!: number;
}

/** A live signing key and its age. */
export class OverviewSigningKeyResponse {
  @ApiProperty({ example: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs' })
  kid!: string;
  @ApiProperty({ example: 'ES256' })
  algorithm!: string;
  @ApiProperty({ example: true })
  is_current!: boolean;
  @ApiProperty({ format: 'date-time', example: '2026-09-01T09:30:00.000Z' })
  created_at!: string;
  /** Whole days since it was created. */
  @ApiProperty({ example: 89 })
  age_days!: number;
}

/** Something an operator must see: `code` for programs, `message` in words for people. */
export class OverviewWarningResponse {
  @ApiProperty({ enum: OVERVIEW_WARNING_CODES, example: 'tracing_off' })
  code!: OverviewWarningCode;
  @ApiProperty({
    example:
      'Tracing is off (telemetry.tracing.enabled is false): a token exchange cannot be followed from the gateway through the broker to the provider in your tracing backend.',
  })
  message!: string;
}

/** `GET /api/overview`: the admin console's first page. */
export class OverviewResponse {
  /** `oauth2_authorization_server.mode`. */
  @ApiProperty({ enum: ['local', 'proxy', 'hybrid'], example: 'local' })
  mode!: 'local' | 'proxy' | 'hybrid';
  /** As `GET /health` reports it. */
  @ApiProperty({ enum: ['healthy', 'starting', 'unhealthy', 'shutting_down'], example: 'healthy' })
  status!: 'healthy' | 'starting' | 'unhealthy' | 'shutting_down';
  @ApiProperty()
  counts!: OverviewCountsResponse;
  /** Live signing keys, newest first; empty in proxy mode (the upstream authorization server signs). */
  @ApiProperty({ type: [OverviewSigningKeyResponse] })
  signing_keys!: OverviewSigningKeyResponse[];
  @ApiProperty({ type: [OverviewWarningResponse] })
  warnings!: OverviewWarningResponse[];
  /** The ten newest ledger events whose actor is an administrator, newest first (items of `GET /api/events`). */
  @ApiProperty({ type: [EventResponse] })
  recent_admin_actions!: EventResponse[];
}
