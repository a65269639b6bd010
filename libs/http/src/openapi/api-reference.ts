import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Express, Request, Response } from 'express';

/** Where the rendered reference lives on a server that serves it (docs/http-api.md "API documents"). */
export const API_REFERENCE_PATH = '/docs';

/** The Swagger UI files the page loads, read once from the `swagger-ui-dist` package. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Started by a file, never inline, so the page's policy can forbid inline script. */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, tryItOutEnabled: false });
});
`;

function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${API_REFERENCE_PATH}/swagger-ui.css">
<link rel="icon" type="image/png" href="${API_REFERENCE_PATH}/favicon-32x32.png">
</head>
<body>
<div id="reference"></div>
<script src="${API_REFERENCE_PATH}/swagger-ui-bundle.js"></script>
<script src="${API_REFERENCE_PATH}/init.js"></script>
</body>
</html>
`;
}

/**
 * No inline script, nothing from another origin, never framed. Swagger UI sets inline
 * styles, hence `style-src 'unsafe-inline'`; its images are data: URIs.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * Serves the server's OpenAPI document rendered for people (Swagger UI) at `/docs`:
 * the page, its init script and the Swagger UI assets, all from this server.
 */
export function installApiReference(express: Express, title: string): void {
  const root = dirname(require.resolve('swagger-ui-dist/package.json'));
  const assets = new Map(Object.entries(ASSETS).map(([name, type]) => [name, { type, body: readFileSync(join(root, name)) }]));
  assets.set('init.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(INIT_SCRIPT) });
  const html = Buffer.from(page(title));
  express.get(API_REFERENCE_PATH, (_request: Request, response: Response) => {
    response.set({ ...SECURITY_HEADERS, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' }).send(html);
  });
  express.get(`${API_REFERENCE_PATH}/:asset`, (request: Request, response: Response, next: () => void) => {
    const asset = assets.get(String(request.params.asset));
    if (asset === undefined) {
      next();
      return;
    }
    response.set({ ...SECURITY_HEADERS, 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=3600' }).send(asset.body);
  });
}
