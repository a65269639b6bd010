import { http, type HttpResponse } from './http-client';

/** JSON calls to one server as one principal (sent in the trusted principal header). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    /** null: send no principal header. */
    readonly principal: string | null = 'admin@example.com',
    private readonly headerName = 'x-remote-user',
  ) {}

  get(path: string): Promise<HttpResponse> {
    return this.send('GET', path);
  }

  post(path: string, body?: unknown): Promise<HttpResponse> {
    return this.send('POST', path, body);
  }

  put(path: string, body?: unknown): Promise<HttpResponse> {
    return this.send('PUT', path, body);
  }

  delete(path: string): Promise<HttpResponse> {
    return this.send('DELETE', path);
  }

  /** The same server as another principal (or none). */
  as(principal: string | null): ApiClient {
    return new ApiClient(this.baseUrl, principal, this.headerName);
  }

  private send(method: string, path: string, body?: unknown): Promise<HttpResponse> {
    const headers: Record<string, string> = {};
    if (this.principal !== null) headers[this.headerName] = this.principal;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return http(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }
}
