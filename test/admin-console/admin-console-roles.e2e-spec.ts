import type { RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  reviewAdminPage,
  startAdminConsoleFixture,
  type AdminConsoleFixture,
} from '../support/admin-console-fixture';

/**
 * Who the admin console lets in, and how: no identity from the proxy, a principal who is not an administrator, and a
 * viewer (read-only administrator) who sees every page with its writes disabled, and whose forced write is refused
 * (403) with the page saying why.
 */

const AUDITOR = 'auditor@example.com';
const MALLORY = 'mallory@example.com';
const READ_ONLY = 'Read-only: your role is viewer';

const PAGES: readonly [string, string][] = [
  ['/', 'Overview'],
  ['/agents', 'Agents'],
  ['/services', 'Services'],
  ['/mcp-servers', 'MCP servers'],
  ['/permission-sets', 'Permission sets'],
  ['/activity', 'Activity'],
  ['/signing-keys', 'Signing keys'],
];

describe('the admin console: sign-in states and roles', () => {
  let fixture: AdminConsoleFixture;
  const opened: RecordedPage[] = [];

  beforeAll(async () => {
    fixture = await startAdminConsoleFixture({
      config: { server: { admin: { authorization: { admins: [ADMIN], viewers: [AUDITOR] } } } },
    });
  });

  afterAll(async () => {
    for (const recorded of opened) await recorded.close();
    await fixture.stop();
  });

  it('says plainly when the proxy sent no identity, with no page behind it', async () => {
    const recorded = await fixture.open('/agents', { principal: null });
    opened.push(recorded);
    const { page } = recorded;
    await page.getByRole('heading', { level: 1, name: 'The broker did not receive your identity' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Admin console' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Agents' }).count()).toBe(0);
    await reviewAdminPage(recorded, 'signin-no-identity');
  });

  it('says plainly when the principal is not an administrator of this broker', async () => {
    const recorded = await fixture.open('/', { principal: MALLORY });
    opened.push(recorded);
    const { page } = recorded;
    await page.getByRole('heading', { level: 1, name: 'You are not an administrator of this broker' }).waitFor();
    const text = (await page.getByRole('main').textContent()) ?? '';
    expect(text).toContain(`${MALLORY} is not an administrator of this broker`);
    expect(text).toContain('server.admin.authorization');
    expect(await page.getByRole('navigation', { name: 'Admin console' }).count()).toBe(0);
    await reviewAdminPage(recorded, 'signin-not-admin');
  });

  it('shows an administrator as such in the header', async () => {
    const recorded = await fixture.open('/');
    opened.push(recorded);
    await recorded.page.getByRole('banner').getByText(ADMIN).waitFor();
    const banner = (await recorded.page.getByRole('banner').textContent()) ?? '';
    expect(banner).toContain(ADMIN);
    expect(banner).toContain('Administrator');
    await expect(recorded.page.getByRole('button', { name: 'Rotate now' }).count()).resolves.toBe(0);
  });

  it('lets a viewer see every page, named a viewer in the header', async () => {
    const recorded = await fixture.open('/', { principal: AUDITOR });
    opened.push(recorded);
    const { page } = recorded;
    await page.getByRole('banner').getByText(AUDITOR).waitFor();
    const banner = (await page.getByRole('banner').textContent()) ?? '';
    expect(banner).toContain(AUDITOR);
    expect(banner).toContain('Viewer (read-only)');
    for (const [path, heading] of PAGES) {
      await page.getByRole('navigation', { name: 'Admin console' }).getByRole('link', { name: heading }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      expect(new URL(page.url()).pathname).toBe(path);
      expect(await page.getByRole('alert').filter({ hasText: 'Not allowed' }).count(), path).toBe(0);
    }
    expect(recorded.pageErrors).toEqual([]);
  });

  it('disables every write on the signing keys page for a viewer, with the reason', async () => {
    const recorded = await fixture.open('/signing-keys', { principal: AUDITOR });
    opened.push(recorded);
    const { page } = recorded;
    await page.getByRole('row').nth(1).waitFor();
    expect(await page.getByText(READ_ONLY).count()).toBeGreaterThan(0);
    for (const name of ['Rotate now', 'Add key only', /^Retire /]) {
      const button = page.getByRole('button', { name }).first();
      expect(await button.isDisabled(), String(name)).toBe(true);
      expect(await button.getAttribute('title')).toBe(READ_ONLY);
    }
    expect(await page.getByLabel('Algorithm of the new key').isDisabled()).toBe(true);
    await reviewAdminPage(recorded, 'roles-viewer-keys');
  });

  it('shows the 403 in words when a viewer forces a write anyway, and nothing changes', async () => {
    const recorded = await fixture.blank({ principal: AUDITOR });
    opened.push(recorded);
    const { page } = recorded;
    // A page that believes the viewer may write (hand-edited, or its role read before a change): the server decides.
    await page.route(`${fixture.adminUrl}/api/me`, (route) =>
      route.fulfill({ json: { principal: AUDITOR, role: 'admin' } }),
    );
    await page.goto(`${fixture.adminUrl}/signing-keys`);
    const before = (await fixture.admin.get('/api/oauth2-server/signing-keys')).json<{ items: unknown[] }>().items;
    const rotate = page.getByRole('button', { name: 'Rotate now' });
    expect(await rotate.isDisabled()).toBe(false);
    await rotate.click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Nothing changed' });
    await alert.waitFor();
    const words = (await alert.textContent()) ?? '';
    expect(words).toContain(`Read-only administrator: ${AUDITOR} can view but not change anything`);
    expect(words).not.toContain('{');
    const after = (await fixture.admin.get('/api/oauth2-server/signing-keys')).json<{ items: unknown[] }>().items;
    expect(after).toHaveLength(before.length);
    await reviewAdminPage(recorded, 'roles-viewer-forced-write');
  });
});
