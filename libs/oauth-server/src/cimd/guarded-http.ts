import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP, type BlockList } from 'node:net';
import { ProviderUnavailable, readCapped } from '@broker/vault';
import { Agent, request } from 'undici';
import { isForbiddenAddress } from './special-use-addresses';

/** Why a guarded GET produced no JSON object. */
export type GuardedFetchFailure = 'host_not_allowed' | 'unreachable' | 'redirect' | 'status' | 'too_large' | 'interrupted' | 'not_json' | 'not_object';

/** A guarded GET failed; `message` is detail for the log (never secret), `reason` what callers branch on. */
export class GuardedFetchError extends Error {
  constructor(
    readonly reason: GuardedFetchFailure,
    message: string,
  ) {
    super(message);
    this.name = 'GuardedFetchError';
  }
}

export interface GuardedHttpOptions {
  /** Connect, headers, body and total timeout. */
  readonly timeoutMs: number;
  /** The answer is dropped past this many bytes, while reading. */
  readonly maxBytes: number;
  /** Special-use networks exempt from the guard (configuration; empty in production). */
  readonly allowed: BlockList;
  /** Extra trusted CAs (PEM), in addition to the system's. */
  readonly ca?: string;
  /** The resolver (default: the system's, `dns.lookup`). */
  readonly lookup?: (hostname: string, options: { all: true }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;
}

/** A JSON object fetched through the guard, with the answer's headers. */
export interface GuardedJson {
  readonly json: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function refusedByGuard(error: unknown): boolean {
  const { code, cause } = error as { code?: string; cause?: { code?: string } };
  return code === 'EFORBIDDEN' || cause?.code === 'EFORBIDDEN';
}

/**
 * Outbound GETs of URLs someone else chose (a client metadata document, an issuer an admin
 * typed) with an SSRF guard: the address is checked when the connection is made (the
 * resolved address itself, so a name that resolves to a private range or re-resolves later
 * is still refused; an IP literal, which never reaches the resolver, is checked before);
 * loopback, private, link-local (cloud metadata), and the other special-use ranges are
 * refused unless allow-listed; no redirects; a total timeout; a size cap while reading.
 * The connection pool is made once, not per request.
 */
export class GuardedHttp {
  private readonly dispatcher: Agent;

  constructor(private readonly options: GuardedHttpOptions) {
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

  /** GETs `url` and returns the JSON object it answers with 200; anything else is `GuardedFetchError`. */
  async getJson(url: string): Promise<GuardedJson> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && isForbiddenAddress(host, this.options.allowed)) throw new GuardedFetchError('host_not_allowed', 'the host is a special-use address');
    let response;
    try {
      response = await request(url, { method: 'GET', dispatcher: this.dispatcher, maxRedirections: 0, signal: AbortSignal.timeout(this.options.timeoutMs), headers: { accept: 'application/json' } });
    } catch (error) {
      if (refusedByGuard(error)) throw new GuardedFetchError('host_not_allowed', 'the host resolves to a special-use address');
      throw new GuardedFetchError('unreachable', `unreachable (${(error as Error).name}${(error as { code?: string }).code ? ` ${(error as { code?: string }).code as string}` : ''})`);
    }
    if (response.statusCode !== 200) {
      await response.body.dump();
      const redirect = response.statusCode >= 300 && response.statusCode < 400;
      throw new GuardedFetchError(redirect ? 'redirect' : 'status', redirect ? `answered a redirect (${response.statusCode}), which is not followed` : `answered ${response.statusCode}`);
    }
    let body: Buffer;
    try {
      body = await readCapped(response.body, this.options.maxBytes);
    } catch (error) {
      const message = (error as Error).message;
      throw new GuardedFetchError(error instanceof ProviderUnavailable && message.includes('larger') ? 'too_large' : 'interrupted', message);
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw new GuardedFetchError('not_json', 'answer is not JSON');
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new GuardedFetchError('not_object', 'answer is not a JSON object');
    return { json: json as Record<string, unknown>, headers: response.headers };
  }
}
