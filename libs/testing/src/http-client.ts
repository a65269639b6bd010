import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { checkContract } from './openapi-contract';

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = Record<string, unknown>>(): T;
}

export interface HttpRequestOptions {
  readonly method?: string;
  /** An array value sends the header several times. */
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string | Buffer;
}

/**
 * A plain node:http request (no client-side header rules, so tests can send what a
 * hostile or broken client would: duplicate headers, odd content types).
 */
export function http(url: string, options: HttpRequestOptions = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = { ...options.headers };
    if (options.body !== undefined && headers['content-length'] === undefined)
      headers['content-length'] = Buffer.byteLength(options.body);
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        // Every broker answer a test receives is checked against the server's OpenAPI document.
        checkContract({
          method: options.method ?? 'GET',
          url,
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          text,
        }).then(
          () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: <T>() => JSON.parse(text) as T }),
          reject,
        );
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** JSON request helper: serialises `body` and sets the content type. */
export function httpJson(
  url: string,
  method: string,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): Promise<HttpResponse> {
  return http(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}
