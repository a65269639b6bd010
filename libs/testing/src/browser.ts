import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { readTestEnvironment } from '@broker/config';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Where the console's screenshots go (git-ignored; created on demand). */
export const SCREENSHOT_DIR = resolve('test-artifacts/console');

/**
 * The system Chromium (Debian's `chromium` package, or `CHROMIUM_PATH`), launched headless by
 * playwright-core: nothing downloads a browser. A missing executable fails the tests loudly.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = readTestEnvironment().chromiumPath;
  if (!existsSync(executablePath)) {
    throw new Error(
      `the console's browser tests need Chromium at ${executablePath}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  // Loaded here, not at import: most tests import this lib and never open a browser.
  const { chromium } = await import('playwright-core');
  // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
  // --disable-dev-shm-usage: containers often give /dev/shm 64 MB, where Chromium's renderers crash.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface ConsolePageOptions {
  /** The broker's end-user origin: only requests to it carry the principal, as an SSO proxy in front of it would add. */
  readonly broker: string;
  /** The signed-in person; null: no principal header at all (the proxy let an unauthenticated request through). */
  readonly principal: string | null;
  readonly principalHeader?: string;
  readonly colorScheme?: 'light' | 'dark';
  readonly viewport?: { width: number; height: number };
}

/** A page whose console errors, uncaught page errors and JavaScript dialogs (alert/confirm/prompt) are recorded. */
export interface RecordedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** `console.error` messages and the browser's own errors (CSP violations, failed loads). */
  readonly consoleErrors: string[];
  /** Uncaught exceptions thrown in the page. */
  readonly pageErrors: string[];
  /** Every alert/confirm/prompt opened (each dismissed at once). */
  readonly dialogs: string[];
  /** Every URL the page requested (to prove a hostile `<img src=x>` was never fetched). */
  readonly requests: string[];
  /** Console errors other than failed resource loads (a 401/404 answer logs one of those by design). */
  unexpectedErrors(): string[];
  close(): Promise<void>;
}

/** A fresh browser context (no shared cookies or storage) and a recorded page in it. */
export async function openConsolePage(browser: Browser, options: ConsolePageOptions): Promise<RecordedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 720 },
    colorScheme: options.colorScheme ?? 'light',
  });
  const origin = new URL(options.broker).origin;
  const header = (options.principalHeader ?? 'X-Remote-User').toLowerCase();
  // The SSO proxy: every request to the broker gets the principal header; a request that already
  // carries one (forged by a page) has it replaced, as a proxy would. Other origins are left alone.
  await context.route(
    (url) => url.origin === origin,
    async (route) => {
      const headers = { ...route.request().headers() };
      delete headers[header];
      if (options.principal !== null) headers[header] = options.principal;
      await route.continue({ headers });
    },
  );
  // A missing element fails a test in 10 s, not Playwright's 30 s.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const dialogs: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('request', (request) => requests.push(request.url()));
  return {
    page,
    context,
    consoleErrors,
    pageErrors,
    dialogs,
    requests,
    unexpectedErrors: () => consoleErrors.filter((text) => !text.startsWith('Failed to load resource')),
    close: () => context.close(),
  };
}

/** The part of axe-core's in-page API `axeViolations` uses. */
interface AxeRunner {
  run(
    context: unknown,
    options: { resultTypes: string[] },
  ): Promise<{ violations: { id: string; impact?: string | null; help: string; nodes: { target: string[] }[] }[] }>;
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string;
  readonly help: string;
  readonly targets: string[];
}

/**
 * Runs axe-core inside the page and returns every violation, whatever its impact (empty: none): the WCAG rules and
 * axe's best practices alike, `page-has-heading-one` and `region` included, since a page a person decides on
 * is held to all of them.
 * The source goes in through the DevTools protocol (`evaluate`), which the page's strict CSP
 * does not govern, so the page under test keeps its real policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // The page's globals are typed here as the little this function reads (the testing lib has no DOM types).
  if (!(await page.evaluate(() => typeof (globalThis as unknown as { axe?: AxeRunner }).axe === 'object')))
    await page.evaluate((await import('axe-core')).default.source);
  const violations = await page.evaluate(async () => {
    const { axe: runner, document } = globalThis as unknown as { axe: AxeRunner; document: unknown };
    const result = await runner.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? 'unknown',
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return violations;
}

/** Readable form of violations for an assertion message. */
export function describeViolations(violations: readonly AxeViolation[]): string {
  return violations.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.slice(0, 3).join(', ')})`).join('\n');
}

/** Where `screenshots` writes and which shots it takes. */
export interface ScreenshotOptions {
  /** Default `test-artifacts/console` (`SCREENSHOT_DIR`). */
  readonly directory?: string;
  /** Also `<name>-mobile-dark.png` (375 px, dark). */
  readonly mobileDark?: boolean;
}

/**
 * Screenshots of the page as it is now: `<name>-light.png` and `<name>-dark.png` at 1280×720
 * and `<name>-mobile.png` at 375×812 (light, a current phone; with `mobileDark` also `<name>-mobile-dark.png`), full
 * page, in `test-artifacts/console/` unless `directory` says otherwise. The page's viewport and colour scheme are
 * restored afterwards. Returns the files written.
 */
export async function screenshots(page: Page, name: string, options: ScreenshotOptions = {}): Promise<string[]> {
  const before = page.viewportSize() ?? { width: 1280, height: 720 };
  const shots: [string, 'light' | 'dark', { width: number; height: number }][] = [
    ['light', 'light', { width: 1280, height: 720 }],
    ['dark', 'dark', { width: 1280, height: 720 }],
    ['mobile', 'light', { width: 375, height: 812 }],
  ];
  if (options.mobileDark === true) shots.push(['mobile-dark', 'dark', { width: 375, height: 812 }]);
  const written: string[] = [];
  for (const [suffix, colorScheme, viewport] of shots) {
    await page.setViewportSize(viewport);
    await page.emulateMedia({ colorScheme });
    const path = resolve(options.directory ?? SCREENSHOT_DIR, `${name}-${suffix}.png`);
    mkdirSync(dirname(path), { recursive: true });
    await page.screenshot({ path, fullPage: true, animations: 'disabled' });
    written.push(path);
  }
  await page.setViewportSize(before);
  await page.emulateMedia({ colorScheme: 'light' });
  return written;
}
