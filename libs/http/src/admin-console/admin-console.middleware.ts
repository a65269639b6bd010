import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerConfig } from '@broker/config';
import type { Logger } from 'pino';
import { staticSite, type ConsoleSite } from '../console/console.middleware';

/**
 * The admin console's pages, which all answer its `index.html` (history fallback): `/` (the overview), the lists
 * `/agents`, `/services`, `/mcp-servers`, `/permission-sets` with their `/new` and `/:id` pages, `/activity` and
 * `/signing-keys`. Nothing else: the admin API keeps `/api/*`, `/health`, `/metrics`, `/openapi.json` and `/docs`.
 */
export const ADMIN_CONSOLE_PAGE =
  /^\/(?:(?:agents|services|mcp-servers|permission-sets)(?:\/[^/]+)?|activity|signing-keys)?$/;

/**
 * Serves the built admin console (docs/admin-console.md) from the admin server, with the same files handling and
 * security headers as the person's console on the end-user server. The end-user server never serves it. Nothing is
 * installed when `server.admin.console.enabled` is false or the console was not built.
 */
export function adminConsoleSite(config: BrokerConfig, logger: Logger): ConsoleSite | undefined {
  const { public_url: publicUrl, console: settings } = config.server.admin;
  if (!settings.enabled) {
    logger.info('admin console not served: server.admin.console.enabled is false');
    return undefined;
  }
  return staticSite(
    {
      name: 'admin console',
      staticDir: settings.static_dir,
      publicUrl,
      where: '/ on the admin server',
      pages: ADMIN_CONSOLE_PAGE,
    },
    logger,
  );
}

/**
 * The address an administrator opens the admin console at (the admin server's `public_url`, the SSO proxy's
 * address), or undefined when the admin server serves none (switched off, or not built). `npm start` logs it.
 */
export function adminConsoleUrl(config: BrokerConfig): string | undefined {
  const { public_url: publicUrl, console: settings } = config.server.admin;
  if (!settings.enabled || !existsSync(join(settings.static_dir, 'index.html'))) return undefined;
  return new URL('/', publicUrl).href;
}
