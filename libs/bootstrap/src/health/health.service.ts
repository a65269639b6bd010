import { Lifecycle } from '@broker/http';
import { Database } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { PinoLogger } from 'nestjs-pino';
import { Clock, ComponentHealth, type ComponentStatus } from '@broker/domain';

/** `GET /health` body (docs/operating.md, "Health"). */
export interface HealthReport {
  status: 'starting' | 'healthy' | 'shutting_down' | 'unhealthy';
  timestamp: string;
  uptime_seconds: number;
  /** Proxy and hybrid modes: `upstream_jwks`; never changes `status`. */
  components?: Record<string, ComponentStatus>;
}

const DATABASE_TIMEOUT_MS = 2_000;
/** Probes come every few seconds from several sources; one database round trip per second is enough. */
const CHECK_CACHE_MS = 1_000;

/**
 * Health as docs/operating.md states it: `starting` until both servers listen and the database
 * answers, `shutting_down` after a signal, `unhealthy` while the database check fails
 * (recovering by itself when it answers again), otherwise `healthy`.
 */
@Injectable()
export class HealthService {
  private lastCheck: { atMs: number; result: Promise<HealthIndicatorResult<'database'>> } | undefined;
  private lastDatabaseUp = true;

  constructor(
    private readonly lifecycle: Lifecycle,
    private readonly database: Database,
    private readonly indicators: HealthIndicatorService,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
    private readonly components: ComponentHealth,
  ) {
    logger.setContext(HealthService.name);
  }

  async report(): Promise<HealthReport> {
    const report: HealthReport = {
      status: await this.status(),
      timestamp: this.clock.now().toISOString(),
      uptime_seconds: this.lifecycle.uptimeSeconds(),
    };
    const components = this.components.report();
    if (components !== undefined) report.components = components;
    return report;
  }

  private async status(): Promise<HealthReport['status']> {
    switch (this.lifecycle.current) {
      case 'starting':
        return 'starting';
      case 'shutting_down':
        return 'shutting_down';
      case 'running': {
        const database = await this.checkDatabase();
        return database.database.status === 'up' ? 'healthy' : 'unhealthy';
      }
    }
  }

  private checkDatabase(): Promise<HealthIndicatorResult<'database'>> {
    const now = this.clock.nowMs();
    if (this.lastCheck && now - this.lastCheck.atMs < CHECK_CACHE_MS) return this.lastCheck.result;
    const result = this.probe();
    this.lastCheck = { atMs: now, result };
    return result;
  }

  private async probe(): Promise<HealthIndicatorResult<'database'>> {
    const indicator = this.indicators.check('database');
    try {
      await this.database.ping(DATABASE_TIMEOUT_MS);
      if (!this.lastDatabaseUp) this.logger.info('database check recovered');
      this.lastDatabaseUp = true;
      return indicator.up();
    } catch (error) {
      if (this.lastDatabaseUp) this.logger.warn({ err: error }, 'database check failed: reporting unhealthy');
      this.lastDatabaseUp = false;
      return indicator.down({ message: 'database unreachable' });
    }
  }
}
