import { Public } from '@broker/auth';
import { Controller, Get, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiServiceUnavailableResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { Response } from 'express';
import { HEALTH_HEADERS, HealthReportView } from './health-report.response';
import { HealthService, type HealthReport } from './health.service';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /**
   * Reports the server's health for probes, without authentication. 200 only when healthy;
   * 503 with the same report while starting, shutting down (answered even then) or
   * unhealthy (the database does not answer).
   */
  @Public()
  @Get()
  @ApiExtraModels(HealthReportView)
  @ApiOkResponse({ description: 'Healthy', headers: HEALTH_HEADERS, schema: reportWithStatus(['healthy']) })
  @ApiServiceUnavailableResponse({
    description: 'Starting, shutting down or unhealthy',
    headers: HEALTH_HEADERS,
    schema: reportWithStatus(['starting', 'shutting_down', 'unhealthy']),
  })
  async check(@Res({ passthrough: true }) response: Response): Promise<HealthReport> {
    const report = await this.health.report();
    response.status(report.status === 'healthy' ? 200 : 503).setHeader('Cache-Control', 'no-store');
    return report;
  }
}

/** The report, with the statuses an answer's HTTP status stands for. */
function reportWithStatus(statuses: readonly HealthReport['status'][]): SchemaObject {
  return {
    allOf: [
      { $ref: getSchemaPath(HealthReportView) },
      { type: 'object', properties: { status: { enum: [...statuses] } } },
    ],
  };
}
