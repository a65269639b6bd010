import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

interface ResourceAnswer {
  id: string;
  display_name: string;
  resource_uri: string;
  scopes: { scope: string; description: string }[];
}

const row = (page: Page, name: string) => page.getByRole('group', { name, exact: true });

/**
 * The admin console's MCP servers pages (the admin API's protected resources) in a real Chromium: registering with
 * each problem at its field in words (a reserved scope, a missing description, a URI with a fragment), the URI
 * another MCP server or a service has, an edit dropping a scope a permission set names, a delete a permission set
 * blocks (each 409 explained, naming who blocks it), then the delete.
 */
describe('admin console: MCP servers', () => {
  let fx: AdminConsoleFixture;
  let resourceId: string;

  beforeAll(async () => {
    fx = await startAdminConsoleFixture({
      config: { server: { admin: { authorization: { viewers: ['auditor@example.com'] } } } },
    });
  });

  afterAll(async () => {
    await fx?.stop();
  });

  const resources = async () => (await fx.admin.get('/api/resources')).json<{ items: ResourceAnswer[] }>().items;

  it('says there is none yet', async () => {
    const recorded = await fx.open('/mcp-servers');
    await recorded.page.getByRole('heading', { name: 'No MCP servers yet' }).waitFor();
    await reviewAdminPage(recorded, 'mcp-servers-empty');
  });

  it('shows each problem at its field, in words, then registers the MCP server', async () => {
    const recorded = await fx.open('/mcp-servers/new');
    const { page } = recorded;
    await page.getByLabel('Name', { exact: true }).fill('Expense reports');
    await page.getByLabel('Resource URI', { exact: true }).fill('https://expenses.example.com/mcp#tools');
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 1').getByLabel('Scope', { exact: true }).fill('openid');
    await row(page, 'Scope 1').getByLabel('What it lets an agent do', { exact: true }).fill('Sign you in');
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 2').getByLabel('Scope', { exact: true }).fill('expenses.submit');
    await page.getByRole('button', { name: 'Register MCP server' }).click();
    await page.getByText(/^Resource URI must have no fragment, no user info/).waitFor();
    await row(page, 'Scope 1')
      .getByText("Scope must not be offline_access or openid (the authorization server's own scopes).")
      .waitFor();
    await row(page, 'Scope 2')
      .getByText('Say what this scope lets an agent do: people read it on the consent page.')
      .waitFor();
    expect(
      await row(page, 'Scope 2').getByLabel('What it lets an agent do', { exact: true }).getAttribute('aria-invalid'),
    ).toBe('true');
    expect(await page.getByLabel('Resource URI', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('main').textContent()).not.toMatch(/resource_uri|scopes\.\d|\{"/);
    await reviewAdminPage(recorded, 'mcp-server-new-errors');

    await page.getByLabel('Resource URI', { exact: true }).fill('https://expenses.example.com/mcp');
    await page.getByRole('button', { name: 'Remove scope 1 (openid)' }).click();
    await row(page, 'Scope 1')
      .getByLabel('What it lets an agent do', { exact: true })
      .fill('Submit expense reports for you');
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 2').getByLabel('Scope', { exact: true }).fill('expenses.read');
    await row(page, 'Scope 2').getByLabel('What it lets an agent do', { exact: true }).fill('See your expense reports');
    await page.getByRole('button', { name: 'Register MCP server' }).click();
    await page.getByRole('heading', { level: 1, name: 'Expense reports' }).waitFor();
    const [stored] = await resources();
    resourceId = stored?.id as string;
    expect(stored).toMatchObject({
      resource_uri: 'https://expenses.example.com/mcp',
      scopes: [
        { scope: 'expenses.submit', description: 'Submit expense reports for you' },
        { scope: 'expenses.read', description: 'See your expense reports' },
      ],
    });
    expect(page.url()).toBe(`${fx.adminUrl}/mcp-servers/${resourceId}`);
    await reviewAdminPage(recorded, 'mcp-server-registered');
  });

  it('explains a resource URI that is another MCP server or a service, naming it', async () => {
    const service = await fx.admin.post('/api/services', {
      display_name: 'Travel',
      client_id: 'travel',
      issuer_uri: 'https://travel.example.com',
      authorization_endpoint: 'https://travel.example.com/authorize',
      token_endpoint: 'https://travel.example.com/token',
      protected_resources: ['https://travel.example.com/api'],
    });
    expect(service.status, service.text).toBe(201);
    const recorded = await fx.open('/mcp-servers/new');
    const { page } = recorded;
    await page.getByLabel('Name', { exact: true }).fill('Expenses again');
    await page.getByLabel('Resource URI', { exact: true }).fill('https://expenses.example.com/mcp');
    await page.getByRole('button', { name: 'Register MCP server' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'The MCP server was not registered.' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain(
      'The MCP server “Expense reports” already has this resource URI: each MCP server has its own.',
    );
    await reviewAdminPage(recorded, 'mcp-server-conflict');

    await page.getByLabel('Resource URI', { exact: true }).fill('https://travel.example.com/api');
    await page.getByRole('button', { name: 'Register MCP server' }).click();
    await notice.filter({ hasText: 'an API of the service “Travel”' }).waitFor();
    expect((await resources()).length).toBe(1);
  });

  it('explains an edit that drops a scope a permission set names, and a delete the set blocks', async () => {
    const set = await fx.admin.post('/api/permission-sets', {
      name: 'Expenses',
      resource_scopes: [{ resource_id: resourceId, scopes: ['expenses.read'] }],
    });
    expect(set.status, set.text).toBe(201);
    const recorded = await fx.open(`/mcp-servers/${resourceId}`);
    const { page } = recorded;
    await page.getByRole('button', { name: 'Remove scope 2 (expenses.read)' }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    const saveNotice = page.getByRole('alert').filter({ hasText: 'Expense reports was not saved.' });
    await saveNotice.waitFor();
    expect(await saveNotice.textContent()).toContain(
      'This change removes the scope expenses.read, which the permission set “Expenses” still names. Remove it from that set first, or keep the scope here.',
    );
    expect((await resources())[0]?.scopes.map((s) => s.scope)).toEqual(['expenses.submit', 'expenses.read']);

    await page.getByRole('button', { name: 'Delete Expense reports…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Expense reports?' });
    await dialog.getByRole('button', { name: 'Delete Expense reports' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'This MCP server cannot be deleted' });
    await notice.waitFor();
    expect(await notice.textContent()).toBe(
      'This MCP server cannot be deleted while the permission set “Expenses” names it. Remove it from that set first.',
    );
    await reviewAdminPage(recorded, 'mcp-server-delete-conflict');

    expect((await fx.admin.delete(`/api/permission-sets/${set.json<{ id: string }>().id}`)).status).toBe(204);
    await page.getByRole('button', { name: 'Delete Expense reports…' }).click();
    await dialog.getByRole('button', { name: 'Delete Expense reports' }).click();
    await page.waitForURL(`${fx.adminUrl}/mcp-servers`);
    await page.getByRole('status').filter({ hasText: 'Expense reports is deleted.' }).waitFor();
    expect(await resources()).toEqual([]);
    expect(recorded.pageErrors).toEqual([]);
  });

  it('shows a viewer every MCP server with each write disabled and why', async () => {
    const created = await fx.admin.post('/api/resources', {
      display_name: 'Files',
      resource_uri: 'https://files.example.com/mcp',
      scopes: [{ scope: 'files.read', description: 'Read your files' }],
    });
    expect(created.status, created.text).toBe(201);
    const list = await fx.open('/mcp-servers', { principal: 'auditor@example.com' });
    await list.page.getByRole('link', { name: 'Files' }).waitFor();
    await list.page.getByText('Read-only: your role is viewer.').waitFor();
    expect(await list.page.getByRole('button', { name: 'Register an MCP server' }).isDisabled()).toBe(true);
    const recorded = await fx.open(`/mcp-servers/${created.json<{ id: string }>().id}`, {
      principal: 'auditor@example.com',
    });
    const { page } = recorded;
    expect(await page.getByLabel('Resource URI', { exact: true }).inputValue()).toBe('https://files.example.com/mcp');
    expect(await page.getByLabel('Resource URI', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Add a scope' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete Files…' }).isDisabled()).toBe(true);
    await reviewAdminPage(recorded, 'mcp-server-viewer');
  });
});
