import type { BrokerConfig } from '@broker/config';
import { NO_TRACING, type Tracing } from './tracing';

/**
 * The process's tracing. Off (the default): `NO_TRACING`, and no OpenTelemetry
 * module is loaded. On: the SDK implementation, imported here and only here.
 */
export async function createTracing(config: BrokerConfig): Promise<Tracing> {
  if (!config.telemetry.tracing.enabled) return NO_TRACING;
  const { OtelTracing } = await import('./otel-tracing');
  return new OtelTracing(config.telemetry.tracing);
}
