import { BROKER_CONFIG, SERVER_KIND, type BrokerConfig, type ServerKind } from '@broker/config';
import { ApiError, normalisePrincipal, type Principal } from '@broker/domain';
import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import type { BrokerRequest } from './broker-request';
import { readCookie } from './cookies';
import { CrossSiteRequestPolicy } from './cross-site-policy';
import { decodeHeaderUtf8 } from './header-utf8';
import { CLIENT_AUTHENTICATED_ROUTE, OPTIONAL_PRINCIPAL_ROUTE, PUBLIC_ROUTE } from './public.decorator';
import { SESSION_COOKIE_NAME, SessionCookieService } from './session-cookie.service';
import { TrustedSources } from './trusted-sources';

/**
 * Deny by default: every route needs a principal unless marked
 * `@Public()` or `@ClientAuthenticated()`. The principal comes from the configured
 * header, believed only from a trusted TCP peer, or, on the
 * end-user server, from the session cookie; when both are present and differ, the
 * header wins. With neither, `development.principal` (end-user server only) stands in.
 */
@Injectable()
export class PrincipalGuard implements CanActivate {
  private readonly headerName: string;
  private readonly trusted: TrustedSources;
  private readonly crossSite: CrossSiteRequestPolicy;
  /** `development.principal` on the end-user server (loopback only, checked at load); never on the admin server. */
  private readonly developmentPrincipal: string | undefined;

  constructor(
    private readonly reflector: Reflector,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(SERVER_KIND) kind: ServerKind,
    // Only the end-user server keeps a session cookie.
    @Optional() private readonly sessions?: SessionCookieService,
  ) {
    const preauth = config.server[kind].authentication.preauth;
    this.headerName = preauth.principal_header_name.toLowerCase();
    this.trusted = new TrustedSources(preauth.trusted_sources);
    this.crossSite = CrossSiteRequestPolicy.forServer(config, kind);
    this.developmentPrincipal = kind === 'enduser' ? config.development.principal : undefined;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    if (this.reflector.getAllAndOverride<boolean>(CLIENT_AUTHENTICATED_ROUTE, targets)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<BrokerRequest>();
    try {
      request.principal = await this.authenticate(request, http.getResponse<Response>());
    } catch (error) {
      if (!this.reflector.getAllAndOverride<boolean>(OPTIONAL_PRINCIPAL_ROUTE, targets)) throw error;
      request.principal = undefined;
    }
    return true;
  }

  private async authenticate(request: BrokerRequest, response: Response): Promise<Principal> {
    const fromHeader = this.principalFromHeader(request);
    const cookie = this.sessions ? readCookie(request.headers.cookie, SESSION_COOKIE_NAME) : undefined;
    const session = cookie && this.sessions ? await this.sessions.verify(cookie) : undefined;
    if (fromHeader !== undefined) {
      if (
        this.sessions &&
        (session === undefined || session.principal !== fromHeader || this.sessions.isStale(session))
      ) {
        response.append('Set-Cookie', this.sessions.setCookieHeader(await this.sessions.issue(fromHeader)));
      }
      return { id: fromHeader, source: 'header' };
    }
    if (session !== undefined) {
      // Only a browser holds the cookie, and a browser always sends Origin on unsafe requests.
      this.crossSite.assertAllowed(request.method, request.headers, true);
      return { id: session.principal, source: 'session_cookie' };
    }
    // No SSO proxy in development. Acts as if the proxy had sent the configured name; the global
    // cross-site middleware has already refused unsafe requests from foreign pages.
    if (this.developmentPrincipal !== undefined) return { id: this.developmentPrincipal, source: 'header' };
    throw new ApiError('unauthorized', 'authentication required');
  }

  /** The trimmed header value from a trusted peer; undefined when absent or untrusted. */
  private principalFromHeader(request: BrokerRequest): string | undefined {
    const values = request.headersDistinct[this.headerName];
    if (values === undefined || values.length === 0) return undefined;
    // From anywhere else the header is ignored: only the proxy may assert identities.
    if (!this.trusted.includes(request.socket.remoteAddress)) return undefined;
    if (values.length > 1) throw new ApiError('bad request', `the ${this.headerName} header must be sent once`);
    // Node reads header bytes as Latin-1; the proxy sends UTF-8 (`café`, not `cafÃ©`).
    const decoded = decodeHeaderUtf8(values[0] as string);
    if (decoded === undefined) throw new ApiError('bad request', `the ${this.headerName} header is not valid UTF-8`);
    const checked = normalisePrincipal(decoded);
    if (checked.ok) return checked.value;
    switch (checked.problem) {
      case 'empty':
        return undefined;
      case 'too_long':
        throw new ApiError('bad request', `the ${this.headerName} header is longer than 200 characters`);
      case 'control_characters':
        throw new ApiError('bad request', `the ${this.headerName} header contains control characters`);
    }
  }
}
