import { readFileSync } from 'node:fs';
import { BROKER_CONFIG, ConfigError, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { CimdFetcher, type FetchedDocument } from './cimd-fetcher';
import { networkList } from './special-use-addresses';

/**
 * Client metadata documents, cached per URL for the document's `Cache-Control: max-age`
 * clamped to `cimd.cache.{min_ttl,max_ttl}`, one fetch at a time per URL (single-flight).
 */
@Injectable()
export class ClientMetadataDocuments {
  private readonly fetcher: CimdFetcher;
  private readonly cache = new Map<string, { readonly document: Record<string, unknown>; readonly expiresAtMs: number }>();
  private readonly inFlight = new Map<string, Promise<Record<string, unknown>>>();
  private readonly minTtlMs: number;
  private readonly maxTtlMs: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly clock: Clock,
  ) {
    const cimd = config.oauth2_authorization_server.cimd;
    let ca: string | undefined;
    if (cimd.tls_ca_file !== undefined) {
      try {
        ca = readFileSync(cimd.tls_ca_file, 'utf8');
      } catch {
        throw new ConfigError('oauth2_authorization_server.cimd.tls_ca_file', `cannot be read (${cimd.tls_ca_file}): give a readable PEM file`);
      }
    }
    this.fetcher = new CimdFetcher({ timeoutMs: cimd.fetch_timeout, maxBytes: cimd.max_response_bytes, allowed: networkList(cimd.allowed_networks), ca });
    this.minTtlMs = cimd.cache.min_ttl;
    this.maxTtlMs = cimd.cache.max_ttl;
  }

  /** The document at `url` (cached); throws `CimdFetchError` when it cannot be used. */
  async get(url: string): Promise<Record<string, unknown>> {
    const cached = this.cache.get(url);
    if (cached !== undefined && cached.expiresAtMs > this.clock.nowMs()) return cached.document;
    const pending = this.inFlight.get(url);
    if (pending !== undefined) return pending;
    const loading = this.fetcher.fetch(url).then((fetched) => this.store(url, fetched)).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, loading);
    return loading;
  }

  private store(url: string, fetched: FetchedDocument): Record<string, unknown> {
    const ttl = Math.min(this.maxTtlMs, Math.max(this.minTtlMs, (fetched.maxAgeSeconds ?? 0) * 1000));
    this.cache.set(url, { document: fetched.json, expiresAtMs: this.clock.nowMs() + ttl });
    return fetched.json;
  }
}
