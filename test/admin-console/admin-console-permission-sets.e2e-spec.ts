import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

interface SetAnswer {
  id: string;
  name: string;
  description: string;
  service_scopes: { service_id: string; scopes: string[]; requirement_type: string }[];
  resource_scopes: { resource_id: string; scopes: string[]; requirement_type: string }[];
}

const row = (page: Page, name: string) => page.getByRole('group', { name, exact: true });

/**
 * The admin console's Permission sets pages in a real Chromium: a set made of a registered service's scopes (ticked
 * from the ones it lists) and an MCP server's, with requirement types in words; an empty set and a taken name refused
 * at their fields in words (the 409 explained); an edit; a delete an agent's assignment blocks, naming the agent.
 */
describe('admin console: permission sets', () => {
  let fx: AdminConsoleFixture;
  let calendar: string;
  let expenses: string;
  let setId: string;

  beforeAll(async () => {
    fx = await startAdminConsoleFixture({
      config: { server: { admin: { authorization: { viewers: ['auditor@example.com'] } } } },
    });
    const idp = 'https://accounts.example.com';
    const service = await fx.admin.post('/api/services', {
      display_name: 'Team Calendar',
      client_id: 'broker',
      issuer_uri: idp,
      authorization_endpoint: `${idp}/authorize`,
      token_endpoint: `${idp}/token`,
      scopes: [
        { scope: 'calendar.read', description: 'See your calendars' },
        { scope: 'calendar.write', description: 'Add and change your events' },
      ],
      protected_resources: ['https://calendar.example.com/api'],
    });
    expect(service.status, service.text).toBe(201);
    calendar = service.json<{ id: string }>().id;
    const resource = await fx.admin.post('/api/resources', {
      display_name: 'Expense reports',
      resource_uri: 'https://expenses.example.com/mcp',
      scopes: [
        { scope: 'expenses.read', description: 'See your expense reports' },
        { scope: 'expenses.submit', description: 'Submit expense reports for you' },
      ],
    });
    expect(resource.status, resource.text).toBe(201);
    expenses = resource.json<{ id: string }>().id;
  });

  afterAll(async () => {
    await fx?.stop();
  });

  const sets = async () => (await fx.admin.get('/api/permission-sets')).json<{ items: SetAnswer[] }>().items;

  it('says there is none yet', async () => {
    const recorded = await fx.open('/permission-sets');
    await recorded.page.getByRole('heading', { name: 'No permission sets yet' }).waitFor();
    await reviewAdminPage(recorded, 'permission-sets-empty');
  });

  it('refuses a set without a name or anything covered, in words at the fields, then creates it from the registry', async () => {
    const recorded = await fx.open('/permission-sets/new');
    const { page } = recorded;
    await page.getByRole('button', { name: 'Create permission set' }).click();
    await page.getByText('Name is required.').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Name', { exact: true }).fill('Plan the week');
    await page.getByRole('button', { name: 'Create permission set' }).click();
    await page.getByText('A permission set covers at least one service or MCP server: add one.').waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(/resource_scopes|service_scopes|\{"/);
    await reviewAdminPage(recorded, 'permission-set-new-errors');

    await page
      .getByLabel('Description (optional)', { exact: true })
      .fill('Reads your calendar and files your expenses');
    await page.getByRole('button', { name: 'Add a service' }).click();
    await row(page, 'Service 1').getByLabel('Service', { exact: true }).selectOption({ label: 'Team Calendar' });
    await row(page, 'Service 1')
      .getByRole('checkbox', { name: /calendar\.read/ })
      .check();
    await row(page, 'Service 1').getByLabel('Requirement', { exact: true }).selectOption({ label: 'Optional' });
    await page.getByRole('button', { name: 'Add an MCP server' }).click();
    await row(page, 'MCP server 1')
      .getByLabel('MCP server', { exact: true })
      .selectOption({ label: 'Expense reports' });
    // An MCP server needs at least one scope: said at its scopes.
    await page.getByRole('button', { name: 'Create permission set' }).click();
    await row(page, 'MCP server 1').getByText('Choose at least one scope of this MCP server.').waitFor();
    await row(page, 'MCP server 1')
      .getByRole('checkbox', { name: /expenses\.submit/ })
      .check();
    await reviewAdminPage(recorded, 'permission-set-new-filled');
    await page.getByRole('button', { name: 'Create permission set' }).click();
    await page.getByRole('heading', { level: 1, name: 'Plan the week' }).waitFor();
    const [stored] = await sets();
    setId = stored?.id as string;
    expect(page.url()).toBe(`${fx.adminUrl}/permission-sets/${setId}`);
    expect(stored).toMatchObject({
      name: 'Plan the week',
      description: 'Reads your calendar and files your expenses',
      service_scopes: [{ service_id: calendar, scopes: ['calendar.read'], requirement_type: 'optional' }],
      resource_scopes: [{ resource_id: expenses, scopes: ['expenses.submit'], requirement_type: 'mandatory' }],
    });
    // The stored set is shown as it was chosen.
    expect(
      await row(page, 'Service 1')
        .getByRole('checkbox', { name: /calendar\.read/ })
        .isChecked(),
    ).toBe(true);
    expect(
      await row(page, 'Service 1')
        .getByRole('checkbox', { name: /calendar\.write/ })
        .isChecked(),
    ).toBe(false);
    await reviewAdminPage(recorded, 'permission-set-created');

    const list = await fx.open('/permission-sets');
    const card = list.page.getByRole('list', { name: 'What Plan the week covers' });
    await card.getByText('Team Calendar').waitFor();
    expect(await card.textContent()).toContain('expenses.submit');
    await reviewAdminPage(list, 'permission-sets-list');
  });

  it('explains a taken name at the name field (409), and saves an edit', async () => {
    const other = await fx.admin.post('/api/permission-sets', {
      name: 'Calendar only',
      service_scopes: [{ service_id: calendar, scopes: ['calendar.read'] }],
    });
    expect(other.status, other.text).toBe(201);
    const recorded = await fx.open(`/permission-sets/${setId}`);
    const { page } = recorded;
    await page.getByLabel('Name', { exact: true }).fill('Calendar only');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByText(
        'Another permission set is named “Calendar only”: names are unique. Choose another name, or edit that set.',
      )
      .waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('alert').filter({ hasText: 'Plan the week was not saved.' }).waitFor();
    await reviewAdminPage(recorded, 'permission-set-conflict');

    await page.getByLabel('Name', { exact: true }).fill('Plan the week');
    await row(page, 'Service 1')
      .getByRole('checkbox', { name: /calendar\.write/ })
      .check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/^Saved\./).waitFor();
    const stored = (await sets()).find((set) => set.id === setId);
    expect(stored?.service_scopes[0]?.scopes).toEqual(['calendar.read', 'calendar.write']);
  });

  it('explains a delete an agent blocks, naming the agent; deletes once it is unassigned', async () => {
    const agent = await fx.admin.post('/api/agents', {
      display_name: 'Week planner',
      permission_sets: [{ permission_set_id: setId }],
    });
    expect(agent.status, agent.text).toBe(201);
    const recorded = await fx.open(`/permission-sets/${setId}`);
    const { page } = recorded;
    await page.getByRole('button', { name: 'Delete Plan the week…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Plan the week?' });
    await dialog.getByRole('button', { name: 'Delete Plan the week' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'Plan the week cannot be deleted' });
    await notice.waitFor();
    expect(await notice.textContent()).toBe(
      "Plan the week cannot be deleted while the agent “Week planner” is assigned it. Remove the set from that agent first (on the agent's page).",
    );
    await reviewAdminPage(recorded, 'permission-set-delete-conflict');

    const agentId = agent.json<{ id: string }>().id;
    expect((await fx.admin.delete(`/api/agents/${agentId}`)).status).toBe(204);
    await page.getByRole('button', { name: 'Delete Plan the week…' }).click();
    await dialog.getByRole('button', { name: 'Delete Plan the week' }).click();
    await page.waitForURL(`${fx.adminUrl}/permission-sets`);
    await page.getByRole('status').filter({ hasText: 'Plan the week is deleted.' }).waitFor();
    expect((await sets()).map((set) => set.name)).toEqual(['Calendar only']);
    expect(recorded.pageErrors).toEqual([]);
  });

  it('shows a viewer every permission set with each write disabled and why', async () => {
    const list = await fx.open('/permission-sets', { principal: 'auditor@example.com' });
    await list.page.getByRole('link', { name: 'Calendar only' }).waitFor();
    await list.page.getByText('Read-only: your role is viewer.').waitFor();
    expect(await list.page.getByRole('button', { name: 'New permission set' }).isDisabled()).toBe(true);
    await list.page.getByRole('link', { name: 'Calendar only' }).click();
    const { page } = list;
    await page.getByRole('heading', { level: 1, name: 'Calendar only' }).waitFor();
    const entry = row(page, 'Service 1');
    expect(await entry.getByRole('checkbox', { name: /calendar\.read/ }).isChecked()).toBe(true);
    expect(await entry.getByRole('checkbox', { name: /calendar\.read/ }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Add a service' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete Calendar only…' }).isDisabled()).toBe(true);
    await reviewAdminPage(list, 'permission-set-viewer');
  });
});
