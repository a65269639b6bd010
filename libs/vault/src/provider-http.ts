import { Agent, request } from 'undici';

/** Limits of every call the broker makes to a third party's token endpoint. */
export const PROVIDER_LIMITS = { connectTimeoutMs: 3_000, totalTimeoutMs: 10_000, maxResponseBytes: 1024 * 1024 } as const;

/** A token endpoint's answer, reduced to what the broker reads. */
export interface ProviderResponse {
  readonly status: number;
  readonly json: Record<string, unknown> | undefined;
}

/** The call did not produce a usable HTTP answer (network, timeout, redirect, oversize). */
export class ProviderUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderUnavailable';
  }
}

export type ProviderLimits = { readonly [K in keyof typeof PROVIDER_LIMITS]: number };

const dispatchers = new Map<string, Agent>();

/** One connection pool per limit set (in practice one, created on first use). */
function dispatcherFor(limits: ProviderLimits): Agent {
  const key = `${limits.connectTimeoutMs}/${limits.totalTimeoutMs}`;
  let dispatcher = dispatchers.get(key);
  if (dispatcher === undefined) {
    dispatcher = new Agent({ connect: { timeout: limits.connectTimeoutMs }, headersTimeout: limits.totalTimeoutMs, bodyTimeout: limits.totalTimeoutMs });
    dispatchers.set(key, dispatcher);
  }
  return dispatcher;
}

/**
 * Reads a response body up to `maxBytes`; beyond that the stream is destroyed and
 * `ProviderUnavailable` says so. Every outbound answer the broker reads goes through here.
 */
export async function readCapped(body: AsyncIterable<unknown> & { destroy(): unknown }, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = chunk as Buffer;
      size += bytes.length;
      if (size > maxBytes) {
        body.destroy();
        throw new ProviderUnavailable(`answer larger than ${maxBytes === 1024 * 1024 ? '1 MiB' : `${maxBytes} bytes`}`);
      }
      chunks.push(bytes);
    }
  } catch (error) {
    if (error instanceof ProviderUnavailable) throw error;
    throw new ProviderUnavailable(`answer interrupted (${(error as Error).name})`);
  }
  return Buffer.concat(chunks);
}

/**
 * POSTs a form to a provider's token endpoint: connect and total timeouts, a 1 MiB cap
 * on the answer, and redirects never followed (a 3xx is a failure). The body is parsed
 * as JSON when it is JSON; it is never logged or echoed.
 */
export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}, limits: ProviderLimits = PROVIDER_LIMITS): Promise<ProviderResponse> {
  const abort = AbortSignal.timeout(limits.totalTimeoutMs);
  let response;
  try {
    response = await request(url, {
      method: 'POST',
      dispatcher: dispatcherFor(limits),
      signal: abort,
      maxRedirections: 0,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
      body: new URLSearchParams(form).toString(),
    });
  } catch (error) {
    throw new ProviderUnavailable(`token endpoint unreachable (${(error as Error).name})`);
  }
  if (response.statusCode >= 300 && response.statusCode < 400) {
    await response.body.dump();
    throw new ProviderUnavailable(`token endpoint answered a redirect (${response.statusCode}), which is not followed`);
  }
  const text = (await readCapped(response.body, limits.maxResponseBytes)).toString('utf8');
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    json = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, json };
}

/** A provider-supplied string reduced to a short, safe message: printable ASCII, at most `max` characters. */
export function sanitiseProviderText(value: unknown, max = 200): string {
  if (typeof value !== 'string') return '';
  return value.replace(/[^\x20-\x7E]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, max);
}

/**
 * GETs a JSON document (an upstream JWK set) with the same limits: timeouts, 1 MiB cap,
 * no redirects. Anything but a 200 JSON object is `ProviderUnavailable`.
 */
export async function getJson(url: string, limits: ProviderLimits = PROVIDER_LIMITS): Promise<Record<string, unknown>> {
  let response;
  try {
    response = await request(url, { method: 'GET', dispatcher: dispatcherFor(limits), signal: AbortSignal.timeout(limits.totalTimeoutMs), maxRedirections: 0, headers: { accept: 'application/json' } });
  } catch (error) {
    throw new ProviderUnavailable(`unreachable (${(error as Error).name})`);
  }
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw new ProviderUnavailable(`answered ${response.statusCode}`);
  }
  const text = (await readCapped(response.body, limits.maxResponseBytes)).toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ProviderUnavailable('answer is not a JSON object');
}
