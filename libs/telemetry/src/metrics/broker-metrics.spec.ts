import { describe, expect, it } from 'vitest';
import { BrokerMetrics } from './broker-metrics';

/** The value of one series of the exposition, or undefined when absent. */
function sample(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('BrokerMetrics', () => {
  it('counts token requests under fixed labels, mapping unknown grant types and outcomes to other', async () => {
    const metrics = new BrokerMetrics(true);
    metrics.tokenRequest('urn:ietf:params:oauth:grant-type:token-exchange', 'ok', 0.002);
    metrics.tokenRequest('urn:ietf:params:oauth:grant-type:token-exchange', 'invalid_grant', 0.001);
    metrics.tokenRequest('https://attacker.example/grant?x=secret', 'made_up_error', 0.001);
    metrics.tokenRequest(undefined, 'invalid_request', 0);
    const { body, contentType } = await metrics.scrape();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(sample(body, 'broker_token_requests_total{grant_type="token_exchange",outcome="ok"}')).toBe(1);
    expect(sample(body, 'broker_token_requests_total{grant_type="token_exchange",outcome="invalid_grant"}')).toBe(1);
    expect(sample(body, 'broker_token_requests_total{grant_type="other",outcome="other"}')).toBe(1);
    expect(sample(body, 'broker_token_requests_total{grant_type="other",outcome="invalid_request"}')).toBe(1);
    expect(sample(body, 'broker_token_exchange_duration_seconds_count{outcome="ok"}')).toBe(1);
    expect(body).not.toContain('attacker');
    expect(body).not.toContain('made_up_error');
  });

  it('labels HTTP requests by the given route template, a fixed method set and the status class', async () => {
    const metrics = new BrokerMetrics(true);
    const admin = metrics.httpServer('admin');
    admin.observe('GET', '/api/agents/:agentId', 200, 0.01);
    admin.observe('GET', '/api/agents/:agentId', 204, 0.01);
    admin.observe('BREW', 'unmatched', 418, 0.01);
    admin.observe('GET', 'unmatched', 999, 0.01);
    const { body } = await metrics.scrape();
    expect(
      sample(
        body,
        'broker_http_request_duration_seconds_count{server="admin",route="/api/agents/:agentId",method="GET",status_class="2xx"}',
      ),
    ).toBe(2);
    expect(
      sample(
        body,
        'broker_http_request_duration_seconds_count{server="admin",route="unmatched",method="other",status_class="4xx"}',
      ),
    ).toBe(1);
    expect(
      sample(
        body,
        'broker_http_request_duration_seconds_count{server="admin",route="unmatched",method="GET",status_class="other"}',
      ),
    ).toBe(1);
  });

  it('reads the database gauges through the readers given at boot, once per cache period', async () => {
    const metrics = new BrokerMetrics(true);
    let reads = 0;
    metrics.setDatabaseReaders({
      sessionsNeedingReauthentication: () => Promise.resolve(++reads),
      approvalsPending: () => Promise.reject(new Error('database down')),
      pool: () => ({ inUse: 2, idle: 3, waiting: 1 }),
    });
    const first = (await metrics.scrape()).body;
    const second = (await metrics.scrape()).body;
    expect(sample(first, 'broker_sessions_needing_reauthentication')).toBe(1);
    expect(sample(second, 'broker_sessions_needing_reauthentication')).toBe(1);
    expect(reads).toBe(1);
    // A failing read leaves the gauge at its last value (0 before any) instead of failing the scrape.
    expect(sample(first, 'broker_approvals_pending')).toBe(0);
    expect(sample(first, 'broker_db_pool_connections{state="waiting"}')).toBe(1);
    expect(sample(first, 'broker_db_pool_connections{state="in_use"}')).toBe(2);
  });

  it('reports the LISTEN connection as down only while its reader says so, and counts outages', async () => {
    const metrics = new BrokerMetrics(true);
    // No LISTEN connection (PGlite, or nothing subscribed): not down.
    expect(sample((await metrics.scrape()).body, 'broker_db_listen_down')).toBe(0);
    expect(sample((await metrics.scrape()).body, 'broker_db_listen_outages_total')).toBe(0);
    let down = true;
    metrics.watchListenConnection(() => down);
    metrics.listenConnectionDown();
    expect(sample((await metrics.scrape()).body, 'broker_db_listen_down')).toBe(1);
    down = false;
    const { body } = await metrics.scrape();
    expect(sample(body, 'broker_db_listen_down')).toBe(0);
    expect(sample(body, 'broker_db_listen_outages_total')).toBe(1);
  });

  it('reports key sets by role only once they attempted a fetch, and counts their failures', async () => {
    const metrics = new BrokerMetrics(true);
    const used = metrics.keySet('trust_anchor');
    metrics.keySet('upstream');
    used.fetchFailed();
    used.fetchSucceeded();
    const { body } = await metrics.scrape();
    expect(sample(body, 'broker_key_set_fetch_failures_total{key_set="trust_anchor"}')).toBe(1);
    expect(sample(body, 'broker_key_set_seconds_since_last_success{key_set="trust_anchor"}')).toBeGreaterThanOrEqual(0);
    expect(body).not.toContain('broker_key_set_seconds_since_last_success{key_set="upstream"}');
  });

  it('includes the process metrics and event-loop lag', async () => {
    const { body } = await new BrokerMetrics(true).scrape();
    expect(body).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(body).toContain('# TYPE process_cpu_seconds_total counter');
  });

  it('does nothing and exposes nothing when disabled', async () => {
    const metrics = new BrokerMetrics(false);
    metrics.tokenRequest('client_credentials', 'ok', 0.001);
    metrics.httpServer('enduser').observe('GET', '/health', 200, 0.001);
    metrics.impersonationDecision('allowed');
    metrics.vaultRefresh('refreshed', 'exchange', 0.1);
    metrics.providerHttpError('timeout');
    metrics.cacheLookup('client', true);
    metrics.keySet('upstream').fetchFailed();
    metrics.watchApprovalWaiters(() => 3);
    metrics.approvalWakeups(2);
    metrics.pgliteWait(0.001);
    metrics.watchListenConnection(() => true);
    metrics.listenConnectionDown();
    metrics.setDatabaseReaders({
      sessionsNeedingReauthentication: () => Promise.resolve(1),
      approvalsPending: () => Promise.resolve(1),
      pool: () => ({ inUse: 1, idle: 0, waiting: 0 }),
    });
    expect(metrics.registry.getMetricsAsArray()).toHaveLength(0);
    expect((await metrics.scrape()).body.trim()).toBe('');
  });
});
