import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApiError, isHttpUrl } from '@broker/domain';
import { metadataUrls, networkList, OutboundHttp } from '@broker/outbound';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { isUri } from '../common/is-uri';

/** The endpoints the broker needs from a third party's metadata. */
export interface DiscoveredEndpoints {
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
}

/** 3 s in all, 256 KiB at most: the cap is enforced while reading, so a hostile issuer cannot make us buffer more. */
const DISCOVERY_TIMEOUT_MS = 3_000;
const DISCOVERY_MAX_BYTES = 256 * 1024;

/**
 * Discovers a third party's authorization and token endpoints from its issuer, with a
 * short timeout, a size cap, no redirects, and the metadata's `issuer` required to equal
 * the configured one (RFC 8414 §3.3), so a service cannot be pointed at another issuer's
 * endpoints by mistake or by a hostile redirect. The admin types the URL, so it goes through
 * the same SSRF guard as client metadata documents (special-use addresses refused unless in
 * `third_party_oauth2.discovery.allowed_networks`), and a failure is answered with one
 * generic reason: what went wrong at which URL is logged, never sent, so the admin API
 * cannot be used to probe the broker's network.
 */
@Injectable()
export class IssuerDiscovery {
  private readonly logger = new Logger(IssuerDiscovery.name);
  private readonly http: OutboundHttp;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.http = new OutboundHttp({
      connectTimeoutMs: DISCOVERY_TIMEOUT_MS,
      totalTimeoutMs: DISCOVERY_TIMEOUT_MS,
      maxResponseBytes: DISCOVERY_MAX_BYTES,
      redirects: 'refuse',
      // The admin typed the URL: the SSRF address rules apply.
      addressGuard: { allowed: networkList(config.third_party_oauth2.discovery.allowed_networks) },
    });
  }

  async discover(issuer: string): Promise<DiscoveredEndpoints> {
    const problems: string[] = [];
    for (const url of metadataUrls(issuer)) {
      try {
        return await this.fetchMetadata(url, issuer);
      } catch (error) {
        problems.push(`${url}: ${(error as Error).message}`);
      }
    }
    this.logger.warn(`issuer discovery of ${issuer} failed (${problems.join('; ')})`);
    throw new ApiError(
      'validation failed',
      `issuer_uri: could not discover the endpoints of ${issuer} (no usable authorization server metadata; the reason is in the broker's log); give authorization_endpoint and token_endpoint or fix issuer_uri`,
      [{ field: 'issuer_uri', problem: `discovery of ${issuer} failed` }],
    );
  }

  private async fetchMetadata(url: string, issuer: string): Promise<DiscoveredEndpoints> {
    // The outbound client under the discovery policy: special-use addresses refused at connect time, no redirects, timeouts, the size cap while reading.
    const { json: metadata } = await this.http.getJson(url);
    if (typeof metadata.issuer !== 'string' || metadata.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) {
      throw new Error('metadata issuer does not match issuer_uri');
    }
    const { authorization_endpoint: authorizationEndpoint, token_endpoint: tokenEndpoint } = metadata;
    // Stored as given and published as `format: uri`: the same rules as endpoints an admin types.
    if (typeof authorizationEndpoint !== 'string' || !isHttpUrl(authorizationEndpoint) || !isUri(authorizationEndpoint))
      throw new Error('no valid authorization_endpoint');
    if (typeof tokenEndpoint !== 'string' || !isHttpUrl(tokenEndpoint) || !isUri(tokenEndpoint))
      throw new Error('no valid token_endpoint');
    return { authorizationEndpoint, tokenEndpoint };
  }
}
