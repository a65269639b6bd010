/** A metric family: its Prometheus type and label names. */
export type Family = { readonly type: 'counter' | 'gauge' | 'histogram'; readonly labels: readonly string[] };

/**
 * The metric catalogue, as docs/operating.md "Metrics" lists it: every broker
 * family with its type and exactly its label names (histograms: without `le`). Written out
 * here, not read from libs/telemetry, so the tests hold the code to the documented list.
 */
export const CATALOGUE: Readonly<Record<string, Family>> = {
  broker_http_request_duration_seconds: { type: 'histogram', labels: ['server', 'route', 'method', 'status_class'] },
  broker_token_requests_total: { type: 'counter', labels: ['grant_type', 'outcome'] },
  broker_token_requests_unauthenticated_total: { type: 'counter', labels: ['grant', 'reason'] },
  broker_token_exchange_duration_seconds: { type: 'histogram', labels: ['outcome'] },
  broker_impersonation_decisions_total: { type: 'counter', labels: ['outcome'] },
  broker_token_revocations_total: { type: 'counter', labels: ['token_type'] },
  broker_token_introspections_total: { type: 'counter', labels: ['active'] },
  broker_vault_refreshes_total: { type: 'counter', labels: ['outcome', 'trigger'] },
  broker_vault_refresh_duration_seconds: { type: 'histogram', labels: ['trigger'] },
  broker_provider_http_errors_total: { type: 'counter', labels: ['kind'] },
  broker_sessions_needing_reauthentication: { type: 'gauge', labels: [] },
  broker_cache_requests_total: { type: 'counter', labels: ['cache', 'result'] },
  broker_key_set_fetch_failures_total: { type: 'counter', labels: ['key_set'] },
  broker_key_set_seconds_since_last_success: { type: 'gauge', labels: ['key_set'] },
  broker_approvals_pending: { type: 'gauge', labels: [] },
  broker_approval_waiters: { type: 'gauge', labels: [] },
  broker_approval_wakeups_total: { type: 'counter', labels: [] },
  broker_db_pool_connections: { type: 'gauge', labels: ['state'] },
  broker_db_listen_down: { type: 'gauge', labels: [] },
  broker_db_listen_outages_total: { type: 'counter', labels: [] },
  broker_db_pglite_wait_seconds: { type: 'histogram', labels: [] },
  broker_events_written_total: { type: 'counter', labels: [] },
  broker_events_dropped_total: { type: 'counter', labels: [] },
};
