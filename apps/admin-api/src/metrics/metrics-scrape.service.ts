import { TrustedSources } from '@broker/auth';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApiError } from '@broker/domain';
import { BrokerMetrics, type Scrape } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';

/**
 * Who may read `GET /metrics` (docs/operating.md): Prometheus sends no
 * principal header, so the scrape is answered without one, but only to TCP peers inside
 * `server.admin.authentication.preauth.trusted_sources`, the same rule that decides whether
 * the principal header is believed. Others get 403; with `telemetry.metrics.enabled: false`
 * the endpoint does not exist (404).
 */
@Injectable()
export class MetricsScrape {
  private readonly trusted: TrustedSources;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly metrics: BrokerMetrics,
  ) {
    this.trusted = new TrustedSources(config.server.admin.authentication.preauth.trusted_sources);
  }

  /** The exposition for the TCP peer `peer`, or the refusal. */
  answer(peer: string | undefined): Promise<Scrape> {
    if (!this.metrics.enabled)
      return Promise.reject(new ApiError('not_found', 'metrics are disabled (telemetry.metrics.enabled)'));
    if (!this.trusted.includes(peer))
      return Promise.reject(
        new ApiError(
          'forbidden',
          'metrics are served only to trusted sources (server.admin.authentication.preauth.trusted_sources)',
        ),
      );
    return this.metrics.scrape();
  }
}
