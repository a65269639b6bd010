import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { traceOutboundCall } from '@broker/telemetry';
import { Agent, request, type Dispatcher } from 'undici';
import { OutboundHttpError } from './outbound-http-error';
import type { AddressGuardPolicy, OutboundPolicy } from './outbound-policy';
import { isForbiddenAddress } from './special-use-addresses';

/** An answer read in full (within the policy's size cap). */
export interface OutboundResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A JSON object answered with 200, with the answer's headers. */
export interface OutboundJson {
  readonly json: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
}

type Body = Dispatcher.ResponseData['body'];
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

const MIB = 1024 * 1024;
/** Codes of undici's errors when the connect or headers timeout passes (the total timeout's abort is a `TimeoutError`). */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);

/** `body` parsed as JSON when it is a JSON object; undefined otherwise (an error page, a JSON array). */
export function jsonObjectOf(body: Buffer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function sizeLabel(bytes: number): string {
  return bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}

/** The error's name and, when it has one, its code: enough for the log, nothing from the peer. */
function errorLabel(error: unknown): string {
  const { name, code } = error as { name?: string; code?: unknown };
  return `${name ?? 'Error'}${typeof code === 'string' ? ` ${code}` : ''}`;
}

function refusedByGuard(error: unknown): boolean {
  const { code, cause } = error as { code?: string; cause?: { code?: string } };
  return code === 'EFORBIDDEN' || cause?.code === 'EFORBIDDEN';
}

/**
 * The resolver the connection uses under an address guard: every address a name resolves
 * to is checked where the connection is made, so DNS rebinding cannot slip past a check
 * made earlier.
 */
function guardedLookup(guard: AddressGuardPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    (guard.lookup ?? dnsLookup)(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const bad = addresses.find((a) => isForbiddenAddress(a.address, guard.allowed));
      if (bad !== undefined || addresses.length === 0)
        return callback(Object.assign(new Error('refused: special-use address'), { code: 'EFORBIDDEN' }), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Reads an answer up to `maxBytes`, counting while reading: past the cap the stream is
 * destroyed at once, so a hostile or broken peer cannot make the broker buffer more.
 */
async function readCapped(body: Body, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = chunk as Buffer;
      size += bytes.length;
      if (size > maxBytes) {
        body.destroy();
        throw new OutboundHttpError('too_large', `answer larger than ${sizeLabel(maxBytes)}`);
      }
      chunks.push(bytes);
    }
  } catch (error) {
    if (error instanceof OutboundHttpError) throw error;
    throw new OutboundHttpError('interrupted', `answer interrupted (${(error as Error).name})`);
  }
  return Buffer.concat(chunks);
}

/**
 * The broker's one outbound HTTP client (undici), used by every call the broker makes:
 * third parties' token endpoints, the upstream authorization server, remote key sets, client
 * metadata documents and issuer discovery. Each use makes one client of its policy, once:
 * the connection pool (with the connect timeout, the CA and the address guard) belongs to
 * the client and is reused by every call. Every call goes through `send`, the one place
 * where the policy is applied (and where trace propagation and metrics belong): redirects
 * never followed, the total timeout, the content types, the size cap while reading, the
 * SSRF rules. Failures are `OutboundHttpError` with a reason; the answer's content is never
 * logged or put in a message.
 */
export class OutboundHttp {
  private readonly dispatcher: Agent;

  constructor(readonly policy: OutboundPolicy) {
    const { connectTimeoutMs, totalTimeoutMs, addressGuard, ca } = policy;
    this.dispatcher = new Agent({
      connect: {
        timeout: connectTimeoutMs,
        ...(addressGuard ? { lookup: guardedLookup(addressGuard) } : {}),
        ...(ca ? { ca } : {}),
      },
      headersTimeout: totalTimeoutMs,
      bodyTimeout: totalTimeoutMs,
    });
  }

  /** GETs the JSON object `url` answers with 200; anything else is `OutboundHttpError`. */
  async getJson(url: string): Promise<OutboundJson> {
    const response = await this.send('GET', url, { accept: 'application/json' }, undefined, 200);
    let json: unknown;
    try {
      json = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new OutboundHttpError('not_json', 'answer is not JSON');
    }
    if (!isJsonObject(json)) throw new OutboundHttpError('not_object', 'answer is not a JSON object');
    return { json, headers: response.headers };
  }

  /**
   * POSTs `form` as `application/x-www-form-urlencoded` with `headers` and returns the
   * answer whatever its status (a 3xx as the policy says).
   */
  postForm(
    url: string,
    form: URLSearchParams | Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<OutboundResponse> {
    const body = (form instanceof URLSearchParams ? form : new URLSearchParams(form)).toString();
    return this.send('POST', url, { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body);
  }

  /**
   * POSTs `body` as it is (the caller sets its content type in `headers`) and returns the
   * answer whatever its status (a 3xx as the policy says). Webhook deliveries.
   * `signal` aborts the request early (a stopping worker); the policy's total timeout applies
   * as well.
   */
  post(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<OutboundResponse> {
    return this.send('POST', url, headers, body, undefined, signal);
  }

  /**
   * One request under the policy; `requiredStatus`, when given, is the only status accepted.
   * With tracing enabled, a CLIENT span of the current request, `traceparent` sent.
   */
  private send(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    requiredStatus?: number,
    signal?: AbortSignal,
  ): Promise<OutboundResponse> {
    return traceOutboundCall(method, url, headers, (traced) =>
      this.sendUntraced(method, url, traced, body, requiredStatus, signal),
    );
  }

  private async sendUntraced(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    requiredStatus?: number,
    signal?: AbortSignal,
  ): Promise<OutboundResponse> {
    const { policy } = this;
    if (policy.addressGuard !== undefined) {
      // An IP literal never reaches the resolver, so the guard judges it here, before any connection.
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0 && isForbiddenAddress(host, policy.addressGuard.allowed))
        throw new OutboundHttpError('forbidden_address', 'the host is a special-use address');
    }
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method,
        headers,
        body,
        dispatcher: this.dispatcher,
        maxRedirections: 0,
        signal:
          signal === undefined
            ? AbortSignal.timeout(policy.totalTimeoutMs)
            : AbortSignal.any([signal, AbortSignal.timeout(policy.totalTimeoutMs)]),
      });
    } catch (error) {
      if (refusedByGuard(error))
        throw new OutboundHttpError('forbidden_address', 'the host resolves to a special-use address');
      const { name, code } = error as { name?: string; code?: string };
      const timedOut = name === 'TimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code));
      throw new OutboundHttpError(
        timedOut ? 'timeout' : 'unreachable',
        `${timedOut ? 'no answer in time' : 'unreachable'} (${errorLabel(error)})`,
      );
    }
    const status = response.statusCode;
    if (status >= 300 && status < 400 && (policy.redirects === 'refuse' || requiredStatus !== undefined)) {
      await response.body.dump();
      throw new OutboundHttpError('redirect', `answered a redirect (${status}), which is not followed`, status);
    }
    if (requiredStatus !== undefined && status !== requiredStatus) {
      await response.body.dump();
      throw new OutboundHttpError('status', `answered ${status}`, status);
    }
    if (policy.contentTypes !== undefined) {
      const header = response.headers['content-type'];
      const mediaType = (typeof header === 'string' ? header : '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!policy.contentTypes.includes(mediaType)) {
        await response.body.dump();
        throw new OutboundHttpError(
          'content_type',
          `answered content type ${mediaType === '' ? '(none)' : JSON.stringify(mediaType.slice(0, 100))}, not one of ${policy.contentTypes.join(', ')}`,
        );
      }
    }
    return { status, headers: response.headers, body: await readCapped(response.body, policy.maxResponseBytes) };
  }
}
