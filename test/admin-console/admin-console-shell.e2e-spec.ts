import type { RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

/** The admin console's frame in a real browser: header, navigation of every page, skip link, the pages' own chunks. */

const PAGES: readonly [string, string, string][] = [
  ['Overview', '/', 'Overview'],
  ['Agents', '/agents', 'Agents'],
  ['Services', '/services', 'Services'],
  ['MCP servers', '/mcp-servers', 'MCP servers'],
  ['Permission sets', '/permission-sets', 'Permission sets'],
  ['Activity', '/activity', 'Activity'],
  ['Signing keys', '/signing-keys', 'Signing keys'],
];

describe('the admin console frame', () => {
  let fixture: AdminConsoleFixture;
  let recorded: RecordedPage | undefined;

  beforeAll(async () => {
    fixture = await startAdminConsoleFixture();
  });

  afterAll(async () => {
    await recorded?.close();
    await fixture.stop();
  });

  it('opens / with the product, the navigation of every page and the overview in <main>', async () => {
    recorded = await fixture.open('/');
    const { page } = recorded;
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await page.getByRole('banner').textContent()).toContain('Identity Broker');
    const nav = page.getByRole('navigation', { name: 'Admin console' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(PAGES.map(([label]) => label));
    await expect(nav.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).resolves.toBe('page');
    expect(await page.title()).toBe('Overview · Admin console · Agent Identity Broker');
    await reviewAdminPage(recorded, 'shell-overview');
    expect(recorded.pageErrors).toEqual([]);
  });

  it('moves between pages through the navigation, each page its own title', async () => {
    const { page } = recorded as RecordedPage;
    for (const [label, path, heading] of PAGES.slice(1)) {
      await page.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: label }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      expect(new URL(page.url()).pathname).toBe(path);
      expect(await page.title()).toBe(`${heading} · Admin console · Agent Identity Broker`);
    }
    expect((recorded as RecordedPage).pageErrors).toEqual([]);
  });

  it('has a skip link that is the first thing a keyboard reaches and leads to the page', async () => {
    const { page } = recorded as RecordedPage;
    await page.goto(`${fixture.adminUrl}/`);
    await page.locator('main').waitFor();
    await page.keyboard.press('Tab');
    const focused = page.locator(':focus');
    await expect(focused.textContent()).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect(page.locator('main#main:focus').count()).resolves.toBe(1);
  });

  it('answers an unknown address with "Page not found" in the frame', async () => {
    const unknown = await fixture.blank();
    try {
      const response = await unknown.page.goto(`${fixture.adminUrl}/settings`);
      expect(response?.status()).toBe(404);
      await unknown.page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
      expect(await unknown.page.getByRole('navigation', { name: 'Admin console' }).isVisible()).toBe(true);
      await reviewAdminPage(unknown, 'shell-not-found');
    } finally {
      await unknown.close();
    }
  });

  it('runs under its CSP without a violation', () => {
    expect((recorded as RecordedPage).unexpectedErrors()).toEqual([]);
  });
});
