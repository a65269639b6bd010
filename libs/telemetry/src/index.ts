/**
 * What an operator watches the broker with. `BrokerMetrics` (Prometheus, via
 * prom-client) and `Tracing` (OpenTelemetry, off by default and not even loaded then) are
 * built once per process by `createTelemetry` and injected where work is counted or
 * traced. Imports nothing of ours but config and domain.
 */
export { BrokerMetrics, type DatabaseReaders, type Scrape } from './metrics/broker-metrics';
export { joinClusterMetrics, serveClusterMetrics } from './metrics/cluster-aggregation';
export { NO_HTTP_SERVER_METRICS, type HttpServerMetrics } from './metrics/http-server-metrics';
export { NO_KEY_SET_METRICS, type KeySetMetrics } from './metrics/key-set-metrics';
export {
  UNMATCHED_ROUTE,
  type CacheName,
  type ImpersonationOutcome,
  type KeySetName,
  type ProviderErrorKind,
  type RefreshOutcome,
  type RefreshTrigger,
  type RevokedTokenType,
} from './metrics/metric-labels';
export { NO_TRACING, Tracing, type RemoteParent, type ServerSpan } from './tracing/tracing';
export { traceStatement, traceOutboundCall, type WithStatus } from './tracing/child-spans';
export { currentTraceId, requestLogger } from './tracing/current-trace-id';
export { createTelemetry, type Telemetry } from './telemetry';
