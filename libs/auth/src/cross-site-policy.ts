import type { BrokerConfig, ServerKind } from '@broker/config';
import { ApiError } from '@broker/domain';
import type { IncomingHttpHeaders } from 'node:http';

/** RFC 9110 §9.2.1: methods a browser may send cross-site without changing state. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What a serialized origin looks like (RFC 6454 §6.2); anything else is not echoed. */
const ORIGIN_SHAPE = /^(null|[a-z][a-z0-9+.-]*:\/\/[A-Za-z0-9.:[\]-]{1,255})$/;

/**
 * The origins whose pages may send state-changing requests to one server: the server's
 * own public origin, plus on the end-user server the consent UI's and the CORS origins
 * (pages already granted credentialed CORS), and on the admin server
 * `server.admin.allowed_origins`.
 */
export function allowedOrigins(config: BrokerConfig, kind: ServerKind): string[] {
  switch (kind) {
    case 'enduser': {
      const { public_url, consent_ui_url, cors } = config.server.enduser;
      return [public_url, consent_ui_url, ...cors.allowed_origins].map((url) => new URL(url).origin);
    }
    case 'admin': {
      const { public_url, allowed_origins } = config.server.admin;
      return [public_url, ...allowed_origins].map((url) => new URL(url).origin);
    }
  }
}

/**
 * Cross-site request refusal (CSRF). A browser attaches the person's credentials (the
 * broker's session cookie, or the SSO proxy's cookie from which the proxy derives the
 * principal header) to a cross-site form post, so whatever authenticated a request, an
 * unsafe one is refused when its `Origin` is not one of this server's allowed origins
 * (`Origin: null` included), or, without an `Origin`, when `Sec-Fetch-Site` says
 * `cross-site`. A request carrying neither header is not a browser's (gateways, curl,
 * scripts) and passes. Built once per server at boot.
 */
export class CrossSiteRequestPolicy {
  private readonly allowed: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.allowed = new Set(origins);
  }

  static forServer(config: BrokerConfig, kind: ServerKind): CrossSiteRequestPolicy {
    return new CrossSiteRequestPolicy(allowedOrigins(config, kind));
  }

  /** True for methods that must pass the cross-site rule. */
  static isUnsafe(method: string): boolean {
    return !SAFE_METHODS.has(method.toUpperCase());
  }

  /**
   * Throws 403 `forbidden` when an unsafe request comes from a foreign page. With
   * `originRequired` (a request authenticated only by the session cookie, which only a
   * browser holds), a missing `Origin` is refused too.
   */
  assertAllowed(method: string, headers: IncomingHttpHeaders, originRequired = false): void {
    if (!CrossSiteRequestPolicy.isUnsafe(method)) return;
    const origin = headers.origin;
    if (origin !== undefined) {
      if (this.allowed.has(origin)) return;
      throw new ApiError(
        'forbidden',
        `cross-site request refused: origin ${ORIGIN_SHAPE.test(origin) ? origin : '(malformed)'} is not allowed`,
      );
    }
    // Fetch Metadata: without an Origin, only a request the browser itself calls cross-site is refused.
    if (isCrossSiteFetch(headers['sec-fetch-site']))
      throw new ApiError(
        'forbidden',
        'cross-site request refused: Sec-Fetch-Site is cross-site and no allowed Origin was sent',
      );
    if (originRequired)
      throw new ApiError(
        'forbidden',
        'a request authenticated by the session cookie must carry the Origin of the broker or the consent UI',
      );
  }
}

function isCrossSiteFetch(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  const values = Array.isArray(value) ? value : value.split(',');
  return values.some((entry) => entry.trim().toLowerCase() === 'cross-site');
}
