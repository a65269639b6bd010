import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, ComponentHealth, OAuthError } from '@broker/domain';
import { getJson, PROVIDER_LIMITS } from '@broker/vault';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { JsonWebKeySet } from '../signing-keys/signing-key.service';

/** Refresh policy: keys are served from cache for 5 minutes; fetch attempts are at least 30 s apart. */
export const UPSTREAM_KEYS_MAX_AGE_MS = 5 * 60_000;
export const UPSTREAM_KEYS_MIN_INTERVAL_MS = 30_000;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * The upstream authorization server's JWK set (proxy and hybrid modes), never fetched per
 * request: cached for `UPSTREAM_KEYS_MAX_AGE_MS`, refetched at most once per
 * `UPSTREAM_KEYS_MIN_INTERVAL_MS` (one fetch at a time), served stale while the upstream
 * is down, and reported as `upstream_jwks: degraded` in health while fetches fail.
 * Only public members are ever republished.
 */
@Injectable()
export class UpstreamKeySet {
  private readonly logger = new Logger(UpstreamKeySet.name);
  private cached: { readonly set: JsonWebKeySet; readonly fetchedAtMs: number } | undefined;
  private lastAttemptMs = Number.NEGATIVE_INFINITY;
  private failing = false;
  private inFlight: Promise<void> | undefined;
  private readonly jwksUri: string | undefined;
  private readonly timeoutMs: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clock: Clock,
    components: ComponentHealth,
  ) {
    this.jwksUri = config.oauth2_authorization_server.proxy.upstream_jwks_uri;
    this.timeoutMs = config.oauth2_authorization_server.proxy.upstream_timeout;
    if (config.oauth2_authorization_server.mode !== 'local') components.register('upstream_jwks', () => (this.failing || this.cached === undefined ? 'degraded' : 'healthy'));
  }

  /** The upstream keys; `temporarily_unavailable` (503) when none could ever be fetched. */
  async keySet(): Promise<JsonWebKeySet> {
    const now = this.clock.nowMs();
    const fresh = this.cached !== undefined && now - this.cached.fetchedAtMs < UPSTREAM_KEYS_MAX_AGE_MS;
    if (!fresh && now - this.lastAttemptMs >= UPSTREAM_KEYS_MIN_INTERVAL_MS) {
      this.inFlight ??= this.refresh().finally(() => (this.inFlight = undefined));
      await this.inFlight;
    } else if (this.inFlight !== undefined) {
      await this.inFlight;
    }
    if (this.cached === undefined) throw new OAuthError('temporarily_unavailable', 'the upstream key set is unavailable');
    return this.cached.set;
  }

  private async refresh(): Promise<void> {
    this.lastAttemptMs = this.clock.nowMs();
    if (this.jwksUri === undefined) {
      this.failing = true;
      return;
    }
    try {
      const document = await getJson(this.jwksUri, { ...PROVIDER_LIMITS, totalTimeoutMs: this.timeoutMs, connectTimeoutMs: Math.min(this.timeoutMs, PROVIDER_LIMITS.connectTimeoutMs) });
      if (!Array.isArray(document.keys)) throw new Error('no keys array');
      const keys = (document.keys as unknown[]).filter((k): k is Record<string, string> => k !== null && typeof k === 'object').map((key) => Object.fromEntries(Object.entries(key).filter(([member]) => !PRIVATE_MEMBERS.includes(member))));
      this.cached = { set: { keys }, fetchedAtMs: this.clock.nowMs() };
      if (this.failing) this.logger.log('upstream key set available again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(`upstream key set fetch failed: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}
