import { ApiError, isHttpUrl } from '@broker/domain';
import { getJson, PROVIDER_LIMITS, type ProviderLimits } from '@broker/vault';
import { Injectable } from '@nestjs/common';

/** The endpoints the broker needs from a third party's metadata. */
export interface DiscoveredEndpoints {
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
}

/** 3 s in all, 256 KiB at most: the cap is enforced while reading, so a hostile issuer cannot make us buffer more. */
const DISCOVERY_LIMITS: ProviderLimits = { ...PROVIDER_LIMITS, connectTimeoutMs: 3_000, totalTimeoutMs: 3_000, maxResponseBytes: 256 * 1024 };

/**
 * Metadata locations of an issuer, in the order tried: RFC 8414 §3.1 (the well-known
 * segment inserted before the issuer's path), then OpenID Connect Discovery 1.0 §4
 * (appended to it).
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
}

/**
 * Discovers a third party's authorization and token endpoints from its issuer, with a
 * short timeout, a size cap, no redirects, and the metadata's `issuer` required to equal
 * the configured one (RFC 8414 §3.3), so a service cannot be pointed at another issuer's
 * endpoints by mistake or by a hostile redirect.
 */
@Injectable()
export class IssuerDiscovery {
  async discover(issuer: string): Promise<DiscoveredEndpoints> {
    const problems: string[] = [];
    for (const url of metadataUrls(issuer)) {
      try {
        return await this.fetchMetadata(url, issuer);
      } catch (error) {
        problems.push(`${url}: ${(error as Error).message}`);
      }
    }
    throw new ApiError(
      'validation failed',
      `issuer_uri: could not discover the endpoints of ${issuer} (${problems.join('; ')}); give authorization_endpoint and token_endpoint or fix issuer_uri`,
      [{ field: 'issuer_uri', problem: `discovery of ${issuer} failed` }],
    );
  }

  private async fetchMetadata(url: string, issuer: string): Promise<DiscoveredEndpoints> {
    // The vault's outbound client: no redirects, timeouts, the size cap while reading, a JSON object or a failure.
    const metadata = await getJson(url, DISCOVERY_LIMITS);
    if (typeof metadata.issuer !== 'string' || metadata.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) {
      throw new Error('metadata issuer does not match issuer_uri');
    }
    const { authorization_endpoint: authorizationEndpoint, token_endpoint: tokenEndpoint } = metadata;
    if (typeof authorizationEndpoint !== 'string' || !isHttpUrl(authorizationEndpoint)) throw new Error('no valid authorization_endpoint');
    if (typeof tokenEndpoint !== 'string' || !isHttpUrl(tokenEndpoint)) throw new Error('no valid token_endpoint');
    return { authorizationEndpoint, tokenEndpoint };
  }
}
