import type { Service } from '@broker/domain';
import { jsonObjectOf, OutboundHttp, OutboundHttpError, type OutboundPolicy } from '@broker/outbound';
import { BrokerMetrics, type ProviderErrorKind } from '@broker/telemetry';
import { Injectable, Optional } from '@nestjs/common';

/** Tokens a provider issued (RFC 6749 §5.1). */
export interface ProviderTokens {
  readonly accessToken: string;
  readonly tokenType: string;
  readonly refreshToken: string | undefined;
  /** Seconds, when the provider says. */
  readonly expiresIn: number | undefined;
  /** Seconds; not standard, but several providers send it. */
  readonly refreshTokenExpiresIn: number | undefined;
  readonly scopes: readonly string[] | undefined;
}

/** The provider answered with an OAuth error (RFC 6749 §5.2); `code` is sanitised. */
export class ProviderRefused extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(`provider refused: ${code}`);
    this.name = 'ProviderRefused';
  }
}

/** The call did not produce a usable HTTP answer (network, timeout, redirect, oversize, an error status). */
export class ProviderUnavailable extends Error {
  constructor(
    message: string,
    /**
     * No answer came (refused connection, DNS, timeout, a connection cut) or the answer was a
     * 5xx (RFC 9110 §15.6: the server failed): the provider is down, not refusing. False for an
     * answer that came but is unusable (a redirect, a 4xx without an OAuth error, not JSON, too large).
     */
    readonly unreachable = false,
  ) {
    super(message);
    this.name = 'ProviderUnavailable';
  }
}

/** An outbound failure in which no answer came from the provider, or a 5xx did. */
function noAnswer(error: OutboundHttpError): boolean {
  const kind = errorKind(error);
  return kind === 'timeout' || kind === 'unreachable' || (error.reason === 'status' && (error.status ?? 0) >= 500);
}

/**
 * Every call to a third party's token endpoint: connect and total timeouts, a 1 MiB cap on
 * the answer, and redirects never followed (a 3xx is a failure).
 */
/** `broker_provider_http_errors_total{kind}` of an outbound failure. */
function errorKind(error: OutboundHttpError): ProviderErrorKind {
  switch (error.reason) {
    case 'timeout':
      return 'timeout';
    case 'unreachable':
    case 'interrupted':
      return 'unreachable';
    case 'status':
    case 'redirect':
      return 'status';
    case 'content_type':
    case 'too_large':
    case 'not_json':
    case 'not_object':
      return 'invalid_response';
    case 'forbidden_address':
      return 'other';
  }
}

export const PROVIDER_POLICY: OutboundPolicy = {
  connectTimeoutMs: 3_000,
  totalTimeoutMs: 10_000,
  maxResponseBytes: 1024 * 1024,
  redirects: 'refuse',
};

/** A provider-supplied string reduced to a short, safe message: printable ASCII, at most `max` characters. */
export function sanitiseProviderText(value: unknown, max = 200): string {
  if (typeof value !== 'string') return '';
  return value
    .replace(/[^\x20-\x7E]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max);
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

function positiveSeconds(value: unknown): number | undefined {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
}

/**
 * Calls third parties' token endpoints as their client: authorization-code exchange
 * with PKCE (RFC 7636) and refresh (RFC 6749 §6), authenticating per the service's
 * `token_endpoint_auth_method` (the secret only for confidential services).
 */
@Injectable()
export class ProviderTokenClient {
  /** One client, so every call reuses its connection pool. */
  private readonly http = new OutboundHttp(PROVIDER_POLICY);

  constructor(@Optional() private readonly metrics?: BrokerMetrics) {}

  exchangeCode(
    service: Service,
    clientSecret: string | null,
    code: string,
    redirectUri: string,
    codeVerifier: string,
  ): Promise<ProviderTokens> {
    return this.call(service, clientSecret, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    });
  }

  refresh(service: Service, clientSecret: string | null, refreshToken: string): Promise<ProviderTokens> {
    return this.call(service, clientSecret, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async call(
    service: Service,
    clientSecret: string | null,
    form: Record<string, string>,
  ): Promise<ProviderTokens> {
    const headers: Record<string, string> = {};
    const body = { ...form };
    switch (service.tokenEndpointAuthMethod) {
      case 'client_secret_basic':
        // RFC 6749 §2.3.1: id and secret are form-encoded before Basic encoding.
        headers.authorization = `Basic ${Buffer.from(`${formEncode(service.clientId)}:${formEncode(clientSecret ?? '')}`).toString('base64')}`;
        break;
      case 'client_secret_post':
        body.client_id = service.clientId;
        body.client_secret = clientSecret ?? '';
        break;
      case 'none':
        body.client_id = service.clientId;
        break;
    }
    let response;
    try {
      // The answer is parsed as JSON when it is JSON; it is never logged or echoed.
      response = await this.http.postForm(service.tokenEndpoint, body, { accept: 'application/json', ...headers });
    } catch (error) {
      this.metrics?.providerHttpError(error instanceof OutboundHttpError ? errorKind(error) : 'other');
      if (error instanceof OutboundHttpError)
        throw new ProviderUnavailable(`token endpoint ${error.message}`, noAnswer(error));
      throw error;
    }
    const json = jsonObjectOf(response.body);
    if (response.status >= 400 && response.status < 500 && json && typeof json.error === 'string') {
      throw new ProviderRefused(
        sanitiseProviderText(json.error, 64) || 'invalid_request',
        sanitiseProviderText(json.error_description),
      );
    }
    if (
      response.status !== 200 ||
      json === undefined ||
      typeof json.access_token !== 'string' ||
      json.access_token.length === 0
    ) {
      this.metrics?.providerHttpError(response.status !== 200 ? 'status' : 'invalid_response');
      if (response.status !== 200 || json === undefined)
        throw new ProviderUnavailable(`token endpoint answered ${response.status}`, response.status >= 500);
      throw new ProviderUnavailable('token endpoint answer has no access_token');
    }
    const tokenType = typeof json.token_type === 'string' && json.token_type.length > 0 ? json.token_type : 'Bearer';
    return {
      accessToken: json.access_token,
      tokenType,
      refreshToken:
        typeof json.refresh_token === 'string' && json.refresh_token.length > 0 ? json.refresh_token : undefined,
      expiresIn: positiveSeconds(json.expires_in),
      refreshTokenExpiresIn: positiveSeconds(json.refresh_token_expires_in ?? json.refresh_expires_in),
      scopes: typeof json.scope === 'string' ? json.scope.split(' ').filter(Boolean) : undefined,
    };
  }
}
