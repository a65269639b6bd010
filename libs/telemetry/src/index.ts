/**
 * Issue 16: what an operator watches the broker with. `BrokerMetrics` (Prometheus, via
 * prom-client) and `Tracing` (OpenTelemetry, off by default and not even loaded then) are
 * built once per process by `createTelemetry` and injected where work is counted or
 * traced. Imports nothing of ours but config and domain.
 */
export { BrokerMetrics } from './metrics/broker-metrics';
export { NO_TRACING, Tracing } from './tracing/tracing';
export { createTelemetry, type Telemetry } from './telemetry';
