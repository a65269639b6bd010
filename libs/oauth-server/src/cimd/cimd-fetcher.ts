import { assertNever } from '@broker/domain';
import { GuardedFetchError, GuardedHttp, type GuardedFetchFailure, type GuardedHttpOptions } from './guarded-http';

/** Why a client metadata document could not be used. */
export class CimdFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CimdFetchError';
  }
}

export type CimdFetchOptions = GuardedHttpOptions;

export interface FetchedDocument {
  readonly json: Record<string, unknown>;
  /** `Cache-Control: max-age`, when given. */
  readonly maxAgeSeconds: number | undefined;
}

/** The client-facing reason (an `invalid_client` description) of a failed fetch. */
function describe(reason: GuardedFetchFailure): string {
  switch (reason) {
    case 'host_not_allowed':
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
    case 'status':
    case 'interrupted':
      return 'the client metadata document could not be fetched';
    default:
      return assertNever(reason, 'guarded fetch failure');
  }
}

/**
 * Fetches client metadata documents through the SSRF guard (`GuardedHttp`): HTTPS only
 * (TLS verified), special-use addresses refused at connect time, no redirects, a total
 * timeout and a size cap.
 */
export class CimdFetcher {
  private readonly http: GuardedHttp;

  constructor(options: CimdFetchOptions) {
    this.http = new GuardedHttp(options);
  }

  async fetch(url: string): Promise<FetchedDocument> {
    if (new URL(url).protocol !== 'https:') throw new CimdFetchError('the client metadata document must be served over https');
    let fetched;
    try {
      fetched = await this.http.getJson(url);
    } catch (error) {
      if (error instanceof GuardedFetchError) throw new CimdFetchError(describe(error.reason));
      throw error;
    }
    const cacheControl = fetched.headers['cache-control'];
    const maxAge = typeof cacheControl === 'string' ? /max-age=(\d+)/.exec(cacheControl)?.[1] : undefined;
    return { json: fetched.json, maxAgeSeconds: maxAge === undefined ? undefined : Number(maxAge) };
  }
}
