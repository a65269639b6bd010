import { readFileSync } from 'node:fs';
import { BROKER_CONFIG, ConfigError, type BrokerConfig } from '@broker/config';
import { Clock } from '@broker/domain';
import { networkList } from '@broker/outbound';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { CimdFetchError, CimdFetcher, type FetchedDocument } from './cimd-fetcher';
import { validateClientMetadata, type ClientMetadata } from './client-metadata';

type Entry =
  | { readonly metadata: ClientMetadata; readonly expiresAtMs: number }
  | { readonly failure: string; readonly expiresAtMs: number };

/**
 * Client metadata documents by URL, validated before they are kept (`validateClientMetadata`).
 * A usable document is cached for its `Cache-Control: max-age` clamped to
 * `cimd.cache.{min_ttl,max_ttl}`; a failed fetch or a refused document is remembered for
 * `cimd.cache.failure_ttl`, so a failing URL is not fetched again on every request. At most
 * `cimd.cache.max_entries` URLs are kept (least recently used evicted first), so URLs
 * matching a `*` pattern cannot fill memory. One fetch at a time per URL (single-flight).
 */
@Injectable()
export class ClientMetadataDocuments {
  private readonly logger = new Logger(ClientMetadataDocuments.name);
  private readonly fetcher: CimdFetcher;
  /** Insertion order is recency order: a hit moves its entry to the end. */
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<ClientMetadata>>();
  private readonly minTtlMs: number;
  private readonly maxTtlMs: number;
  private readonly failureTtlMs: number;
  private readonly maxEntries: number;

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
        throw new ConfigError(
          'oauth2_authorization_server.cimd.tls_ca_file',
          `cannot be read (${cimd.tls_ca_file}): give a readable PEM file`,
        );
      }
    }
    this.fetcher = new CimdFetcher({
      timeoutMs: cimd.fetch_timeout,
      maxBytes: cimd.max_response_bytes,
      allowed: networkList(cimd.allowed_networks),
      ca,
    });
    this.minTtlMs = cimd.cache.min_ttl;
    this.maxTtlMs = cimd.cache.max_ttl;
    this.failureTtlMs = cimd.cache.failure_ttl;
    this.maxEntries = cimd.cache.max_entries;
  }

  /** The validated document at `url` (cached); throws `CimdFetchError` when it cannot be used. */
  async get(url: string): Promise<ClientMetadata> {
    const cached = this.cache.get(url);
    if (cached !== undefined) {
      this.cache.delete(url);
      if (cached.expiresAtMs > this.clock.nowMs()) {
        this.cache.set(url, cached);
        if ('failure' in cached) throw new CimdFetchError(cached.failure);
        return cached.metadata;
      }
    }
    const pending = this.inFlight.get(url);
    if (pending !== undefined) return pending;
    const loading = this.load(url).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, loading);
    return loading;
  }

  private async load(url: string): Promise<ClientMetadata> {
    let fetched: FetchedDocument;
    let metadata: ClientMetadata;
    try {
      fetched = await this.fetcher.fetch(url);
      metadata = validateClientMetadata(url, fetched.json);
    } catch (error) {
      if (!(error instanceof CimdFetchError)) throw error;
      this.logger.warn(`client metadata document refused: ${error.message}`);
      this.store(url, { failure: error.message, expiresAtMs: this.clock.nowMs() + this.failureTtlMs });
      throw error;
    }
    const ttl = Math.min(this.maxTtlMs, Math.max(this.minTtlMs, (fetched.maxAgeSeconds ?? 0) * 1000));
    this.store(url, { metadata, expiresAtMs: this.clock.nowMs() + ttl });
    return metadata;
  }

  private store(url: string, entry: Entry): void {
    this.cache.delete(url);
    this.cache.set(url, entry);
    // Evict the least recently used beyond the bound (Map iteration is insertion order).
    for (const oldest of this.cache.keys()) {
      if (this.cache.size <= this.maxEntries) break;
      this.cache.delete(oldest);
    }
  }
}
