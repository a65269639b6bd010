import { resolve } from 'node:path';
import {
  ApiClient,
  axeViolations,
  describeViolations,
  FrozenClock,
  freePort,
  launchBrowser,
  openConsolePage,
  screenshots,
  startGatewayFixture,
  type GatewayFixture,
  type RecordedPage,
  type TestBroker,
} from '@broker/testing';
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { BOTH_SERVERS } from './servers';

/** The administrator every admin console test signs in as unless it says otherwise. */
export const ADMIN = 'admin@example.com';

/** Where the admin console's screenshots go (git-ignored). */
export const ADMIN_SCREENSHOT_DIR = resolve('test-artifacts/admin-console');

export interface AdminPageOptions {
  /** The principal the SSO proxy passes (default `ADMIN`); null: no principal header at all. */
  readonly principal?: string | null;
  readonly colorScheme?: 'light' | 'dark';
  readonly viewport?: { width: number; height: number };
}

/**
 * One real broker (both servers, local mode, in-memory PGlite) serving the built admin console (dist/admin-console)
 * on its admin server, whose `public_url` is its real address (the cross-site check accepts the console's writes);
 * a gateway trusted for token exchange (a person's grant through an agent); one headless Chromium.
 */
export interface AdminConsoleFixture {
  readonly gateway: GatewayFixture;
  readonly broker: TestBroker;
  /** The admin server's origin: the admin console's and the admin API's. */
  readonly adminUrl: string;
  /** The end-user server's origin (the person's console and API, the OAuth2 endpoints). */
  readonly enduserUrl: string;
  /** The admin API as `ADMIN` (`.as(principal)` for another). */
  readonly admin: ApiClient;
  readonly browser: Browser;
  readonly clock: FrozenClock;
  /** A recorded page through the SSO proxy (`options.principal`), at `path` once the console's frame has rendered. */
  open(path: string, options?: AdminPageOptions): Promise<RecordedPage>;
  /** A recorded page through the SSO proxy, not yet navigated anywhere. */
  blank(options?: AdminPageOptions): Promise<RecordedPage>;
  stop(): Promise<void>;
}

/**
 * Starts the fixture. `principal`: the default principal of `open` and `blank`; `config`: merged over the
 * fixture's own (e.g. `server.admin.authorization` for roles).
 */
export async function startAdminConsoleFixture(
  options: { principal?: string | null; config?: Record<string, unknown> } = {},
): Promise<AdminConsoleFixture> {
  const browser = await launchBrowser();
  const clock = new FrozenClock(new Date());
  const adminPort = await freePort();
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  let gateway: GatewayFixture;
  try {
    gateway = await startGatewayFixture({
      servers: BOTH_SERVERS,
      clock,
      config: mergeTrees(
        {
          server: { admin: { port: adminPort, public_url: adminUrl } },
          log: { level: 'warn' },
        },
        options.config ?? {},
      ),
    });
  } catch (error) {
    await browser.close().catch(() => undefined);
    throw error;
  }
  const { broker, base } = gateway;
  const defaultPrincipal = options.principal === undefined ? ADMIN : options.principal;
  const blank = (pageOptions: AdminPageOptions = {}) =>
    openConsolePage(browser, {
      broker: adminUrl,
      principal: pageOptions.principal === undefined ? defaultPrincipal : pageOptions.principal,
      colorScheme: pageOptions.colorScheme,
      viewport: pageOptions.viewport,
    });
  return {
    gateway,
    broker,
    adminUrl,
    enduserUrl: base,
    admin: new ApiClient(adminUrl, ADMIN),
    browser,
    clock,
    blank,
    async open(path, pageOptions = {}) {
      const recorded = await blank(pageOptions);
      const response = await recorded.page.goto(`${adminUrl}${path}`);
      expect(response?.status(), `GET ${path}`).toBe(200);
      // The console has rendered once the frame's main landmark is there.
      await recorded.page.locator('main').first().waitFor();
      return recorded;
    },
    async stop() {
      await browser.close().catch(() => undefined);
      await gateway.stop();
    },
  };
}

type Tree = Record<string, unknown>;

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `override` over `base`, objects merged key by key, anything else replaced. */
function mergeTrees(base: Tree, override: Tree): Tree {
  const merged: Tree = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const under = merged[key];
    merged[key] = isTree(under) && isTree(value) ? mergeTrees(under, value) : value;
  }
  return merged;
}

/** axe-core in the page: no violation of any impact (best practices included). */
export async function expectAdminAccessible(recorded: RecordedPage, what: string): Promise<void> {
  const violations = await axeViolations(recorded.page);
  expect(violations, `${what}: axe-core violations\n${describeViolations(violations)}`).toEqual([]);
}

/**
 * The accessibility check of the page as it is now, in light and in dark, then screenshots (light and dark at
 * 1280 and at 375 px) into test-artifacts/admin-console/`name`-*.png.
 */
export async function reviewAdminPage(recorded: RecordedPage, name: string): Promise<void> {
  const { page } = recorded;
  await expectAdminAccessible(recorded, `${name} (light)`);
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    await expectAdminAccessible(recorded, `${name} (dark)`);
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
  await screenshots(page, name, { directory: ADMIN_SCREENSHOT_DIR, mobileDark: true });
}
