import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, ComponentHealth, OAuthError } from '@broker/domain';
import { BrokerMetrics } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import type { JSONWebKeySet } from 'jose';
import { RemoteKeySet } from '../jwt/remote-key-set';
import type { JsonWebKeySet } from '../signing-keys/signing-key.service';

/** Refresh policy: keys are served from cache for 5 minutes; fetch attempts are at least 30 s apart. */
export const UPSTREAM_KEYS_MAX_AGE_MS = 5 * 60_000;
export const UPSTREAM_KEYS_MIN_INTERVAL_MS = 30_000;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * The upstream authorization server's JWK set (proxy and hybrid modes), republished: a
 * `RemoteKeySet` (never fetched per request, cached for `UPSTREAM_KEYS_MAX_AGE_MS`,
 * refetched at most once per `UPSTREAM_KEYS_MIN_INTERVAL_MS`, served stale while the
 * upstream is down) reported as `upstream_jwks: degraded` in health while fetches fail.
 * Only public members are ever republished; the republished object stays the same until
 * the upstream's keys change (so its bytes are prepared once).
 */
@Injectable()
export class UpstreamKeySet {
  private readonly remote: RemoteKeySet | undefined;
  private published: { source: JSONWebKeySet; set: JsonWebKeySet } | undefined;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    clock: Clock,
    components: ComponentHealth,
    metrics: BrokerMetrics,
  ) {
    const proxy = config.oauth2_authorization_server.proxy;
    if (proxy.upstream_jwks_uri !== undefined)
      this.remote = new RemoteKeySet(
        proxy.upstream_jwks_uri,
        clock,
        {
          maxAgeMs: UPSTREAM_KEYS_MAX_AGE_MS,
          minIntervalMs: UPSTREAM_KEYS_MIN_INTERVAL_MS,
          timeoutMs: proxy.upstream_timeout,
        },
        metrics.keySet('upstream'),
      );
    if (config.oauth2_authorization_server.mode !== 'local')
      components.register('upstream_jwks', () => (this.remote?.healthy === true ? 'healthy' : 'degraded'));
  }

  /** The upstream keys; `temporarily_unavailable` (503) when none could ever be fetched. */
  async keySet(): Promise<JsonWebKeySet> {
    const source = await this.remote?.current();
    if (source === undefined) throw new OAuthError('temporarily_unavailable', 'the upstream key set is unavailable');
    if (this.published?.source !== source) {
      const keys = source.keys.map(
        (key) =>
          Object.fromEntries(Object.entries(key).filter(([member]) => !PRIVATE_MEMBERS.includes(member))) as Record<
            string,
            string
          >,
      );
      this.published = { source, set: { keys } };
    }
    return this.published.set;
  }
}
