import { Registry } from 'prom-client';

/**
 * The broker's Prometheus metrics (issue 16): one registry per process, every family
 * created once at boot, so that counting on the hot path is a label lookup and an add.
 * Labels carry only values the code chooses from a fixed set (route templates, grant
 * types, OAuth error codes, outcomes): never a principal, token, agent or client id, or
 * anything a caller writes freely. When `telemetry.metrics.enabled` is false the same
 * methods do nothing and `/metrics` is not served.
 */
export class BrokerMetrics {
  readonly registry = new Registry();

  constructor(readonly enabled: boolean) {}
}
