import { createLogger, Lifecycle } from '@broker/http';
import { Database } from '@broker/persistence';
import { FrozenClock, LogCapture, testConfig } from '@broker/testing';
import { HealthIndicatorService } from '@nestjs/terminus';
import { PinoLogger } from 'nestjs-pino';
import { ComponentHealth } from '@broker/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthService } from './health.service';

describe('HealthService', () => {
  const clock = new FrozenClock('2026-05-01T10:00:00.000Z');
  let database: Database;
  let lifecycle: Lifecycle;
  let health: HealthService;

  beforeAll(async () => {
    const config = testConfig();
    const logger = createLogger(config, new LogCapture());
    database = await Database.open(config, logger);
    lifecycle = new Lifecycle(clock);
    health = new HealthService(
      lifecycle,
      database,
      new HealthIndicatorService(),
      clock,
      new PinoLogger({ pinoHttp: { logger } }),
      new ComponentHealth(),
    );
  });

  afterAll(async () => {
    await database.close();
  });

  it('reports starting until the servers listen', async () => {
    expect(await health.report()).toEqual({
      status: 'starting',
      timestamp: '2026-05-01T10:00:00.000Z',
      uptime_seconds: 0,
    });
  });

  it('reports healthy once running with the database answering, with whole uptime seconds', async () => {
    lifecycle.markRunning();
    clock.advance(90_500);
    expect(await health.report()).toEqual({
      status: 'healthy',
      timestamp: '2026-05-01T10:01:30.500Z',
      uptime_seconds: 90,
    });
  });

  it('reports unhealthy when the database stops answering', async () => {
    await database.close();
    clock.advance(5_000);
    expect((await health.report()).status).toBe('unhealthy');
  });

  it('reports shutting_down after a signal, whatever the database says', async () => {
    lifecycle.beginShutdown();
    expect((await health.report()).status).toBe('shutting_down');
  });
});
