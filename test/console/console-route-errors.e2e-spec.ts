import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

/**
 * The console's own error pages where the router would show its developer page: a page file that does not load
 * because the broker is not answering, or because an upgrade replaced it while the tab was open.
 */
describe('console: a page that cannot load says so in words', () => {
  let fixture: ConsoleFixture;

  beforeAll(async () => {
    fixture = await startConsoleFixture();
  });

  afterAll(async () => {
    await fixture?.stop();
  });

  /** The Connections page's own file (its code-split chunk), as the built console names it. */
  const connectionsChunk = (url: URL) => /^\/assets\/ConnectionsPage-[\w-]+\.js$/.test(url.pathname);

  /** Every document (full page) load of `path`: a reload of the console shows here. */
  function documentLoads(page: Page, path: string): string[] {
    const loads: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'document' && new URL(request.url()).pathname === path) loads.push(request.url());
    });
    return loads;
  }

  it('reloads once by itself when a page file is gone after an upgrade, and opens the page', async () => {
    const recorded = await fixture.open('/agents');
    const { page } = recorded;
    await expect(page.getByRole('heading', { level: 1, name: 'Agents' }).isVisible()).resolves.toBe(true);
    // The upgrade: the file this tab knows answers 404 once; the reloaded console finds it.
    let missing = 1;
    await page.route(connectionsChunk, async (route) => {
      if (missing-- > 0) await route.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' });
      else await route.fallback();
    });
    const loads = documentLoads(page, '/connections');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
    expect(loads, 'the console reloaded itself exactly once').toHaveLength(1);
    expect(await page.getByText('Unexpected Application Error').count()).toBe(0);
    await recorded.context.close();
  });

  it('says the page could not be loaded when the file is still missing after the one reload, and loops no more', async () => {
    const recorded = await fixture.open('/agents');
    const { page } = recorded;
    await page.route(connectionsChunk, (route) =>
      route.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' }),
    );
    const loads = documentLoads(page, '/connections');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Connections' }).click();
    const heading = page.getByRole('heading', { level: 1, name: 'This page could not be loaded' });
    await heading.waitFor();
    expect(loads, 'one reload, then the page in words').toHaveLength(1);
    await expect(page.getByText(/reloaded once by itself/).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Reload' }).isVisible()).resolves.toBe(true);
    // The frame stays: the navigation is still there to go elsewhere.
    await expect(page.getByRole('navigation', { name: 'Console' }).isVisible()).resolves.toBe(true);
    expect(await page.getByText(/Hey developer|Unexpected Application Error|dynamically imported/).count()).toBe(0);
    await expect(page.title()).resolves.toMatch(/^This page could not be loaded · /);
    await reviewPage(recorded, 'route-error-file-missing');
    // Still 404: the Reload button reloads (once per press), never in a loop by itself.
    await page.getByRole('button', { name: 'Reload' }).click();
    await heading.waitFor();
    expect(loads).toHaveLength(2);
    // Another page of the console opens normally.
    await page.getByRole('link', { name: 'Your agents' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await recorded.context.close();
  });

  it('says the broker is not answering, with Retry, and opens the page by itself once it answers again', async () => {
    const recorded = await fixture.open('/agents');
    const { page } = recorded;
    // The network to the broker goes down (page routes come before the fixture's SSO-proxy route).
    await page.route(
      (url) => url.origin === fixture.base,
      (route) => route.abort('connectionrefused'),
    );
    const loads = documentLoads(page, '/connections');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'The broker is not answering' }).waitFor();
    const banner = page.getByRole('status').filter({ hasText: 'This page could not be opened.' });
    await expect(banner.isVisible()).resolves.toBe(true);
    expect(loads, 'no reload while the broker does not answer (it would show the browser error page)').toHaveLength(0);
    await reviewPage(recorded, 'route-error-not-answering');
    await page.getByRole('button', { name: 'Retry' }).click();
    await banner.filter({ hasText: 'Still no answer' }).waitFor();
    expect(loads).toHaveLength(0);
    // The broker is back: the page notices by itself within its probe interval and opens Connections.
    await page.unroute((url) => url.origin === fixture.base);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor({ timeout: 15_000 });
    expect(loads).toHaveLength(1);
    await recorded.context.close();
  });

  // Last: it stops the broker.
  it('shows the not-answering page, not the router developer page, when the broker is stopped and the person navigates', async () => {
    const recorded = await fixture.open('/agents');
    const { page } = recorded;
    await fixture.broker.stop();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('heading', { level: 1, name: 'The broker is not answering' }).waitFor();
    expect(await page.getByText(/Hey developer|Unexpected Application Error|dynamically imported/).count()).toBe(0);
    await reviewPage(recorded, 'route-error-broker-stopped');
    await recorded.context.close();
  });
});
