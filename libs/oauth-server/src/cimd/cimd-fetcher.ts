import type { BlockList } from 'node:net';
import { assertNever } from '@broker/domain';
import {
  OutboundHttp,
  OutboundHttpError,
  type OutboundFailure,
  type OutboundPolicy,
  type Resolver,
} from '@broker/outbound';

/** Why a client metadata document could not be used. */
export class CimdFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CimdFetchError';
  }
}

/** The CIMD fetch settings (`oauth2_authorization_server.cimd`). */
export interface CimdFetchOptions {
  /** Connect and total timeout. */
  readonly timeoutMs: number;
  /** The document is dropped past this many bytes, while reading. */
  readonly maxBytes: number;
  /** Special-use networks exempt from the SSRF guard (configuration; empty in production). */
  readonly allowed: BlockList;
  /** Extra trusted CAs (PEM), in addition to the system's. */
  readonly ca?: string;
  /** The resolver (default: the system's). */
  readonly lookup?: Resolver;
}

export interface FetchedDocument {
  readonly json: Record<string, unknown>;
  /** `Cache-Control: max-age`, when given. */
  readonly maxAgeSeconds: number | undefined;
}

/**
 * The outbound policy of client metadata documents: the client chose the URL, so the SSRF
 * address rules apply; no redirects; one timeout for connect and total.
 */
function cimdPolicy(options: CimdFetchOptions): OutboundPolicy {
  return {
    connectTimeoutMs: options.timeoutMs,
    totalTimeoutMs: options.timeoutMs,
    maxResponseBytes: options.maxBytes,
    redirects: 'refuse',
    addressGuard: { allowed: options.allowed, ...(options.lookup ? { lookup: options.lookup } : {}) },
    ...(options.ca ? { ca: options.ca } : {}),
  };
}

/** The client-facing reason (an `invalid_client` description) of a failed fetch. */
function describe(reason: OutboundFailure): string {
  switch (reason) {
    case 'forbidden_address':
      return 'the client metadata document host is not allowed';
    case 'redirect':
      return 'the client metadata document redirects, which is not followed';
    case 'too_large':
      return 'the client metadata document is too large';
    case 'not_json':
      return 'the client metadata document is not JSON';
    case 'not_object':
      return 'the client metadata document is not a JSON object';
    case 'unreachable':
    case 'timeout':
    case 'status':
    case 'content_type':
    case 'interrupted':
      return 'the client metadata document could not be fetched';
    default:
      return assertNever(reason, 'outbound failure');
  }
}

/**
 * Fetches client metadata documents through the outbound client under `cimdPolicy`: HTTPS
 * only (TLS verified), special-use addresses refused at connect time, no redirects, a total
 * timeout and a size cap.
 */
export class CimdFetcher {
  private readonly http: OutboundHttp;

  constructor(options: CimdFetchOptions) {
    this.http = new OutboundHttp(cimdPolicy(options));
  }

  async fetch(url: string): Promise<FetchedDocument> {
    if (new URL(url).protocol !== 'https:')
      throw new CimdFetchError('the client metadata document must be served over https');
    let fetched;
    try {
      fetched = await this.http.getJson(url);
    } catch (error) {
      if (error instanceof OutboundHttpError) throw new CimdFetchError(describe(error.reason));
      throw error;
    }
    const cacheControl = fetched.headers['cache-control'];
    const maxAge = typeof cacheControl === 'string' ? /max-age=(\d+)/.exec(cacheControl)?.[1] : undefined;
    return { json: fetched.json, maxAgeSeconds: maxAge === undefined ? undefined : Number(maxAge) };
  }
}
