import { Public } from '@broker/auth';
import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { HealthService, type HealthReport } from './health.service';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  /** 200 only when healthy; 503 while starting, shutting down or unhealthy. */
  @Public()
  @Get()
  @ApiOkResponse({ description: 'healthy' })
  @ApiServiceUnavailableResponse({ description: 'starting, shutting_down or unhealthy' })
  async check(@Res({ passthrough: true }) response: Response): Promise<HealthReport> {
    const report = await this.health.report();
    response.status(report.status === 'healthy' ? 200 : 503).setHeader('Cache-Control', 'no-store');
    return report;
  }
}
