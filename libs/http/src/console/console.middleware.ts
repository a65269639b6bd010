import type { BrokerConfig } from '@broker/config';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { readConsoleFiles, type ConsoleFile } from './console-files';
import { consoleSecurityHeaders } from './console-headers';

/**
 * The console's pages (API.md consent UI paths), which all answer the single page's `index.html` (history fallback):
 * `/agents`, `/agents/:id`, `/connections`, `/approvals`, `/approvals/remembered`, `/approvals/:id`, and `/activity`
 * (issue 17 item 3). Nothing else.
 */
export const CONSOLE_PAGE = /^\/(?:agents(?:\/[^/]+)?|connections|approvals(?:\/[^/]+)?|activity)$/;

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

/**
 * Serves the built console (issue 15 item 2) from the end-user server when `consent_ui_url` is the broker's own
 * `public_url`; otherwise, or when the console was not built, installs nothing and the paths answer the API's 404
 * envelope. The files are read once here; a request is a map lookup by exact name, so no path (`/assets/../x`,
 * encoded or not) reaches the file system, and there is no listing. Only GET and HEAD are answered; anything else,
 * and every unknown asset name, falls through to the API's own routes and 404.
 * Returns the middleware to install, or undefined.
 */
export function consoleMiddleware(config: BrokerConfig, logger: Logger): RequestHandler | undefined {
  const { public_url: publicUrl, consent_ui_url: consentUiUrl, console: settings } = config.server.enduser;
  if (new URL(consentUiUrl).href !== new URL(publicUrl).href) {
    logger.info({ consent_ui_url: consentUiUrl }, 'console not served by this server: consent_ui_url is elsewhere (host dist/console there)');
    return undefined;
  }
  const files = readConsoleFiles(settings.static_dir);
  if (files === undefined) {
    logger.warn({ static_dir: settings.static_dir }, `console not served: ${settings.static_dir}/index.html not found; run npm run build`);
    return undefined;
  }
  const security = consoleSecurityHeaders(publicUrl);
  const pageHeaders: Headers = { ...security, 'Cache-Control': PAGE_CACHE };
  const assetHeaders: Headers = { ...security, 'Cache-Control': ASSET_CACHE };
  logger.info({ static_dir: settings.static_dir, assets: files.assets.size }, 'console served at the consent UI paths');

  return (request: Request, response: Response, next: NextFunction): void => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return next();
    const path = request.path;
    if (path.startsWith(ASSETS_PREFIX)) {
      const asset = files.assets.get(path.slice(ASSETS_PREFIX.length));
      if (asset === undefined) return next();
      return send(request, response, asset, assetHeaders);
    }
    if (CONSOLE_PAGE.test(path)) return send(request, response, files.index, pageHeaders);
    // A newcomer opening the broker's root lands on the console, not on a 404.
    if (path === '/') {
      response.status(302).set(security).location('/agents').end();
      return;
    }
    next();
  };
}
