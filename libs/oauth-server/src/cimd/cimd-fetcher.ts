import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type BlockList } from 'node:net';
import { ProviderUnavailable, readCapped } from '@broker/vault';
import { Agent, request } from 'undici';
import { isForbiddenAddress } from './special-use-addresses';

/** Why a client metadata document could not be used. */
export class CimdFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CimdFetchError';
  }
}

export interface CimdFetchOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly allowed: BlockList;
  /** Extra trusted CAs (PEM), in addition to the system's. */
  readonly ca?: string;
  /** The resolver (default: the system's, `dns.lookup`). */
  readonly lookup?: (hostname: string, options: { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;
}

export interface FetchedDocument {
  readonly json: Record<string, unknown>;
  /** `Cache-Control: max-age`, when given. */
  readonly maxAgeSeconds: number | undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Fetches client metadata documents with an SSRF guard: HTTPS only (TLS verified); the
 * address is checked when the connection is made (the resolved address itself, so a name
 * that resolves to a private range or re-resolves later is still refused); no redirects;
 * a total timeout and a size cap.
 */
export class CimdFetcher {
  private readonly dispatcher: Agent;

  constructor(private readonly options: CimdFetchOptions) {
    const guardedLookup = (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
      (options.lookup ?? dnsLookup)(hostname, { all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        const bad = addresses.find((a) => isForbiddenAddress(a.address, options.allowed));
        if (bad !== undefined || addresses.length === 0) return callback(Object.assign(new Error('refused: special-use address'), { code: 'EFORBIDDEN' }), []);
        if (lookupOptions.all) return callback(null, addresses);
        const first = addresses[0] as LookupAddress;
        return callback(null, first.address, first.family);
      });
    };
    this.dispatcher = new Agent({
      connect: { lookup: guardedLookup, timeout: options.timeoutMs, ...(options.ca ? { ca: options.ca } : {}) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  async fetch(url: string): Promise<FetchedDocument> {
    const target = new URL(url);
    if (target.protocol !== 'https:') throw new CimdFetchError('the client metadata document must be served over https');
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // An IP literal never goes through the resolver: check it here.
    if (isIP(host) !== 0 && isForbiddenAddress(host, this.options.allowed)) throw new CimdFetchError('the client metadata document host is not allowed');
    let response;
    try {
      response = await request(url, { method: 'GET', dispatcher: this.dispatcher, maxRedirections: 0, signal: AbortSignal.timeout(this.options.timeoutMs), headers: { accept: 'application/json' } });
    } catch (error) {
      const refused = (error as { code?: string; cause?: { code?: string } }).code === 'EFORBIDDEN' || (error as { cause?: { code?: string } }).cause?.code === 'EFORBIDDEN';
      throw new CimdFetchError(refused ? 'the client metadata document host is not allowed' : 'the client metadata document could not be fetched');
    }
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new CimdFetchError(response.statusCode >= 300 && response.statusCode < 400 ? 'the client metadata document redirects, which is not followed' : 'the client metadata document could not be fetched');
    }
    let body: Buffer;
    try {
      body = await readCapped(response.body, this.options.maxBytes);
    } catch (error) {
      throw new CimdFetchError(error instanceof ProviderUnavailable && error.message.includes('larger') ? 'the client metadata document is too large' : 'the client metadata document could not be fetched');
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw new CimdFetchError('the client metadata document is not JSON');
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new CimdFetchError('the client metadata document is not a JSON object');
    const cacheControl = response.headers['cache-control'];
    const maxAge = typeof cacheControl === 'string' ? /max-age=(\d+)/.exec(cacheControl)?.[1] : undefined;
    return { json: json as Record<string, unknown>, maxAgeSeconds: maxAge === undefined ? undefined : Number(maxAge) };
  }
}
