import type { RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';
import { grantedAgent } from '../support/granted-agent';

/** The Overview page: health, mode, counts, signing keys and their ages, warnings in words, recent admin actions. */

const DAY_MS = 86_400_000;

describe('the admin console: overview', () => {
  let fixture: AdminConsoleFixture;
  let recorded: RecordedPage;

  /** The number on the count card labelled `label`. */
  const countOf = async (label: string): Promise<string | null> =>
    recorded.page
      .locator('.count-card', { has: recorded.page.getByText(label, { exact: true }) })
      .locator('.count-value')
      .textContent();

  beforeAll(async () => {
    fixture = await startAdminConsoleFixture({
      // An allow-list wider than loopback: the overview must warn.
      config: { third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8', '10.0.0.0/8'] } } },
    });
  });

  afterAll(async () => {
    await recorded?.close();
    await fixture.stop();
  });

  it('shows a fresh install: healthy, local mode, nothing registered, the steps to start, one current key', async () => {
    recorded = await fixture.open('/');
    const { page } = recorded;
    await page.getByRole('heading', { name: 'Registered and in use' }).waitFor();
    const status = (await page.getByRole('region', { name: 'Health and mode' }).textContent()) ?? '';
    expect(status).toContain('Healthy');
    expect(status).toContain('Local');
    for (const label of ['Agents', 'Services', 'MCP servers', 'Permission sets', 'Active grants', 'Pending approvals'])
      expect(await countOf(label), label).toBe('0');
    await page.getByRole('heading', { name: 'Get started' }).waitFor();
    expect(await page.getByRole('link', { name: 'Register an agent' }).getAttribute('href')).toBe('/agents/new');
    const keys = (await fixture.admin.get('/api/oauth2-server/signing-keys')).json<{ items: { kid: string }[] }>();
    const keyRow = page
      .getByRole('region', { name: 'Signing keys' })
      .getByRole('row', { name: new RegExp(keys.items[0]?.kid ?? '-') });
    expect(await keyRow.textContent()).toContain('Current');
    expect(await keyRow.textContent()).toContain('less than a day');
    const warnings = (await page.getByRole('region', { name: 'Needs your attention' }).textContent()) ?? '';
    expect(warnings).toContain('Tracing is off');
    expect(warnings).toContain('10.0.0.0/8');
    expect(warnings).not.toContain('rotate_after');
    expect(await page.getByRole('region', { name: 'Recent admin actions' }).textContent()).toContain(
      'No administrator has changed anything yet',
    );
    await reviewAdminPage(recorded, 'overview-fresh');
  });

  it('counts what is registered and in use, and lists the recent admin actions with who did them', async () => {
    await grantedAgent(
      { admin: fixture.adminUrl, enduser: fixture.enduserUrl },
      ['alice@example.com'],
      'Expense assistant',
    );
    const { page } = recorded;
    await page.reload();
    await page.getByRole('heading', { name: 'Registered and in use' }).waitFor();
    expect(await countOf('Agent')).toBe('1');
    expect(await countOf('Service')).toBe('1');
    expect(await countOf('Permission set')).toBe('1');
    expect(await countOf('Active grant')).toBe('1');
    expect(await page.getByRole('heading', { name: 'Get started' }).count()).toBe(0);
    const recent = (await page.getByRole('region', { name: 'Recent admin actions' }).textContent()) ?? '';
    expect(recent).toContain('Agent registered');
    expect(recent).toContain('Service added');
    expect(recent).toContain('by admin@example.com');
    // A person's grant is not an admin action.
    expect(recent).not.toContain('Access granted');
    await reviewAdminPage(recorded, 'overview-in-use');
  });

  it('warns when the current signing key is older than rotate_after, with the way to rotate', async () => {
    fixture.clock.advance(100 * DAY_MS);
    const { page } = recorded;
    await page.reload();
    const warnings = page.getByRole('region', { name: 'Needs your attention' });
    await warnings.getByText('100 days old').waitFor();
    await reviewAdminPage(recorded, 'overview-key-due');
    await warnings.getByRole('link', { name: 'Rotate the signing key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Signing keys' }).waitFor();
    expect(recorded.pageErrors).toEqual([]);
  });
});
