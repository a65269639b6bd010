import type { BrokerConfig } from '@broker/config';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { readConsoleFiles, type ConsoleFile } from './console-files';
import { consoleSecurityHeaders } from './console-headers';

/**
 * The console's pages, which all answer the single page's `index.html` (history fallback):
 * `/agents`, `/agents/:id`, `/connections`, `/approvals`, `/approvals/remembered`, `/approvals/:id`, `/activity`
 * and `/authorization-requests/:id` (the link a refused token exchange answers). Nothing else.
 */
export const CONSOLE_PAGE =
  /^\/(?:agents(?:\/[^/]+)?|connections|approvals(?:\/[^/]+)?|activity|authorization-requests\/[^/]+)$/;

const ASSETS_PREFIX = '/assets/';

/** Hashed file names: a new build is new URLs, so a browser may keep each one for a year. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** The page names the current build's assets: revalidated every time. */
const PAGE_CACHE = 'no-cache';

/** True when the request's `Accept-Encoding` accepts gzip (not refused with `q=0`). */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  for (const entry of header.split(',')) {
    const [coding, ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.find((param) => param.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

type Headers = Readonly<Record<string, string>>;

function send(request: Request, response: Response, file: ConsoleFile, headers: Headers): void {
  const gzip = file.gzip !== undefined && acceptsGzip(request.headers['accept-encoding']) ? file.gzip : undefined;
  const body = gzip ?? file.body;
  response.writeHead(200, {
    ...headers,
    'Content-Type': file.contentType,
    'Content-Length': String(body.length),
    ...(file.gzip !== undefined ? { Vary: 'Accept-Encoding' } : {}),
    ...(gzip !== undefined ? { 'Content-Encoding': 'gzip' } : {}),
  });
  // Node sends no body for HEAD.
  response.end(body);
}

/** An error answer written as a page: status, headers and the bytes. */
export interface ConsolePageAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** The served console: its middleware, and the page a browser gets instead of an error's JSON. */
export interface ConsoleSite {
  readonly middleware: RequestHandler;
  /**
   * The console's page for an error answer (`status`, the envelope's `error` code) to a browser's GET or HEAD, or
   * undefined when the JSON stays (an API client, the API's own paths, assets). See `browserErrorPage`.
   */
  readonly errorPage: (request: Request, status: number, code: string) => ConsolePageAnswer | undefined;
}

/** The authorization endpoint's errors the console explains (RFC 6749 §4.1.2.1: never redirected), by code. */
const AUTHORIZE_ERRORS = new Set([
  'invalid_client',
  'invalid_redirect_uri',
  'invalid_request',
  'unsupported_response_type',
  'invalid_scope',
  'invalid_target',
  'access_denied',
]);

/** Paths whose errors stay JSON even for a browser: the APIs, OAuth2 and discovery documents, and the console's files. */
const JSON_ONLY = /^\/(?:api|oauth2|\.well-known|assets)(?:\/|$)/;

/** True when the request prefers an HTML page over JSON (a browser's navigation); no `Accept` or `*\/*` is JSON. */
export function prefersHtml(request: Request): boolean {
  return request.accepts(['application/json', 'text/html']) === 'text/html';
}

/**
 * The page code a browser's error answer shows, or undefined when the error stays JSON: at `/oauth2/authorize`,
 * `unauthenticated` (401: no identity from the sign-in proxy), `server_error` (5xx), `agent_suspended` (403) or the OAuth2 error code from a
 * fixed list (else `invalid_request`); elsewhere outside `JSON_ONLY`, an unknown path's 404 (`''`: no code, the
 * console's own "page not found"). Never text from the request: the page explains the code in its own words.
 */
export function browserErrorCode(path: string, status: number, code: string): string | undefined {
  if (path === '/oauth2/authorize') {
    if (status === 401) return 'unauthenticated';
    if (status >= 500) return 'server_error';
    // Its only 403: the agent is suspended by an administrator (docs/admin-api.md "Suspending an agent").
    if (status === 403) return 'agent_suspended';
    return AUTHORIZE_ERRORS.has(code) ? code : 'invalid_request';
  }
  if (status === 404 && !JSON_ONLY.test(path)) return '';
  return undefined;
}

/** The console's `index.html` naming `code` (from `browserErrorCode`'s fixed vocabulary) in a meta element. */
function pageWithCode(index: Buffer, code: string): Buffer {
  if (code === '') return index;
  const html = index.toString('utf8');
  const at = html.indexOf('</head>');
  const meta = `<meta name="broker-error" content="${code}">`;
  return Buffer.from(at < 0 ? `${meta}${html}` : `${html.slice(0, at)}${meta}${html.slice(at)}`, 'utf8');
}

/** What differs between the two consoles a broker serves (the person's on the end-user server, the admin one). */
export interface SiteOptions {
  /** For the log lines: "console" or "admin console". */
  readonly name: string;
  /** The folder holding the built `index.html` and `assets/`. */
  readonly staticDir: string;
  /** The server's own `public_url` (the policy's loopback images). */
  readonly publicUrl: string;
  /** Where its pages are, for the log line ("the consent UI paths"). */
  readonly where: string;
  /** The page paths answered with `index.html` (history fallback). */
  readonly pages: RegExp;
  /** Where `/` goes: a redirect to a page, or undefined when `/` is itself a page (`pages` matches it). */
  readonly rootRedirect?: string;
}

/**
 * Serves a built single-page console: the files are read once here; a request is a map lookup by exact name, so no
 * path (`/assets/../x`, encoded or not) reaches the file system, and there is no listing. Only GET and HEAD are
 * answered; anything else, and every unknown asset name, falls through to the API's own routes and 404. Every
 * answer carries the console's security headers (`console-headers.ts`). Returns undefined (the paths answer the
 * API's 404 envelope) when the console was not built.
 */
export function staticSite(options: SiteOptions, logger: Logger): ConsoleSite | undefined {
  const { name, staticDir, publicUrl, where, pages, rootRedirect } = options;
  const files = readConsoleFiles(staticDir);
  if (files === undefined) {
    logger.warn({ static_dir: staticDir }, `${name} not served: ${staticDir}/index.html not found; run npm run build`);
    return undefined;
  }
  const security = consoleSecurityHeaders(publicUrl);
  const pageHeaders: Headers = { ...security, 'Cache-Control': PAGE_CACHE };
  const assetHeaders: Headers = { ...security, 'Cache-Control': ASSET_CACHE };
  logger.info({ static_dir: staticDir, assets: files.assets.size }, `${name} served at ${where}`);

  const middleware = (request: Request, response: Response, next: NextFunction): void => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return next();
    const path = request.path;
    if (path.startsWith(ASSETS_PREFIX)) {
      const asset = files.assets.get(path.slice(ASSETS_PREFIX.length));
      if (asset === undefined) return next();
      return send(request, response, asset, assetHeaders);
    }
    if (pages.test(path)) return send(request, response, files.index, pageHeaders);
    // A newcomer opening the server's root lands on the console, not on a 404.
    if (path === '/' && rootRedirect !== undefined) {
      response.status(302).set(security).location(rootRedirect).end();
      return;
    }
    next();
  };
  const errorHeaders: Headers = { ...security, 'Cache-Control': 'no-store', 'Content-Type': files.index.contentType };
  const errorPage = (request: Request, status: number, code: string): ConsolePageAnswer | undefined => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !prefersHtml(request)) return undefined;
    const shown = browserErrorCode(request.path, status, code);
    if (shown === undefined) return undefined;
    const body = pageWithCode(files.index.body, shown);
    return { status, headers: { ...errorHeaders, 'Content-Length': String(body.length) }, body };
  };
  return { middleware, errorPage };
}

/**
 * Serves the built console from the end-user server when `consent_ui_url` is the broker's own
 * `public_url`; otherwise, or when the console was not built, installs nothing and the paths answer the API's 404
 * envelope. `/` redirects to the person's agents.
 * Returns the middleware to install and the browser's error page, or undefined.
 */
export function consoleSite(config: BrokerConfig, logger: Logger): ConsoleSite | undefined {
  const { public_url: publicUrl, consent_ui_url: consentUiUrl, console: settings } = config.server.enduser;
  if (new URL(consentUiUrl).href !== new URL(publicUrl).href) {
    logger.info(
      { consent_ui_url: consentUiUrl },
      'console not served by this server: consent_ui_url is elsewhere (host dist/console there)',
    );
    return undefined;
  }
  return staticSite(
    {
      name: 'console',
      staticDir: settings.static_dir,
      publicUrl,
      where: 'the consent UI paths',
      pages: CONSOLE_PAGE,
      rootRedirect: '/agents',
    },
    logger,
  );
}
