import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** Dependencies reported beside the status; they never change it. */
@ApiSchema({ name: 'HealthComponents' })
export class HealthComponentsView {
  /** Proxy and hybrid modes: `degraded` while the upstream key set cannot be fetched (the last one is served meanwhile). */
  @ApiProperty({ enum: ['healthy', 'degraded'] })
  upstream_jwks!: 'healthy' | 'degraded';
}

/** `GET /health` (docs/operating.md, "Health"). */
@ApiSchema({ name: 'HealthReport' })
export class HealthReportView {
  /** `starting` until both servers listen and the database answers; `shutting_down` after a signal; `unhealthy` while the database check fails. */
  @ApiProperty({ enum: ['starting', 'healthy', 'shutting_down', 'unhealthy'] })
  status!: 'starting' | 'healthy' | 'shutting_down' | 'unhealthy';
  @ApiProperty({ format: 'date-time' })
  timestamp!: string;
  /** Whole seconds since the servers started listening. */
  @ApiProperty({ type: 'integer', minimum: 0 })
  uptime_seconds!: number;
  /** Proxy and hybrid modes only; left out in local mode (optional). */
  @ApiPropertyOptional({ type: HealthComponentsView })
  components?: HealthComponentsView;
}

/** Probes must never see a cached answer. */
export const HEALTH_HEADERS: HeadersObject = {
  'Cache-Control': { description: '`no-store`', schema: { type: 'string', enum: ['no-store'] } },
};
