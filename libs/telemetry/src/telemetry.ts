import type { BrokerConfig } from '@broker/config';
import { BrokerMetrics } from './metrics/broker-metrics';
import { createTracing } from './tracing/create-tracing';
import type { Tracing } from './tracing/tracing';

/** What one process measures and traces with, shared by its servers (`BrokerRuntime.telemetry`). */
export interface Telemetry {
  readonly metrics: BrokerMetrics;
  readonly tracing: Tracing;
}

/** Builds the process's telemetry once, at boot: the OpenTelemetry SDK is loaded only when tracing is enabled. */
export async function createTelemetry(config: BrokerConfig): Promise<Telemetry> {
  return { metrics: new BrokerMetrics(config.telemetry.metrics.enabled), tracing: await createTracing(config) };
}
