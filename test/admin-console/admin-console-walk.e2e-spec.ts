import { ApiClient, http, type RecordedPage } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

const ALICE = 'alice@example.com';
const IDP = 'https://login.expenses.example.com';
const SERVICE_RESOURCE = 'https://api.expenses.example.com/v1';
const MCP_URI = 'https://expenses.example.com/mcp';

/** A row of the registry's list editors (a scope, a permission set's entry). */
const row = (page: Page, name: string) => page.getByRole('group', { name, exact: true });

/**
 * A fresh install walked in a real Chromium, from the admin console alone: the empty overview, an agent with client
 * credentials, a third-party service, an MCP server, a permission set naming both given to the agent, a person's
 * grant visible on the agent's page, then an incident: every grant revoked and the agent suspended, each confirmed
 * in words. The person's side is the consent API their console calls.
 */
describe('admin console: a fresh install, from the first agent to an incident', () => {
  let fx: AdminConsoleFixture;
  let recorded: RecordedPage;
  let page: Page;

  beforeAll(async () => {
    fx = await startAdminConsoleFixture();
    recorded = await fx.open('/');
    page = recorded.page;
  });

  afterAll(async () => {
    await recorded?.close();
    await fx?.stop();
  });

  async function tokenStatus(agentId: string, secret: string): Promise<number> {
    const response = await http(`${fx.enduserUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: agentId,
        client_secret: secret,
      }).toString(),
    });
    return response.status;
  }

  const nav = (name: string) => page.getByRole('navigation').getByRole('link', { name, exact: true });

  it('walks from the empty overview to an incident revoke', async () => {
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await reviewAdminPage(recorded, 'walk-1-overview');

    // 1. The agent, and its client credentials (the secret once).
    await nav('Agents').click();
    await page.getByRole('heading', { name: 'No agents yet' }).waitFor();
    await page.getByRole('link', { name: 'New agent' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('Expense assistant');
    await page.getByLabel('Description', { exact: true }).fill('Files your expense reports from your receipts.');
    await page.getByRole('button', { name: 'Add redirect URI' }).click();
    await page.getByRole('textbox', { name: 'Redirect URI 1' }).fill('https://assistant.example.com/oauth2/callback');
    await page.getByRole('button', { name: 'Register agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Expense assistant' }).waitFor();
    const agentId = /\/agents\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
    const credentials = page.getByRole('region', { name: 'Client credentials' });
    await credentials.getByRole('button', { name: 'Create client credentials' }).click();
    const shown = credentials.getByRole('region', { name: 'New client secret' });
    const secret = (await shown.locator('code').innerText()).trim();
    expect(secret).toMatch(/^aib_cs_/);
    await reviewAdminPage(recorded, 'walk-2-agent-credentials');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    expect(await tokenStatus(agentId, secret)).toBe(200);

    // 2. The third-party service the agent's tokens are exchanged for.
    await nav('Services').click();
    await page.getByRole('link', { name: 'Register a service' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('Expenses');
    await page.getByLabel('Issuer URL', { exact: true }).fill(IDP);
    await page.getByLabel('Authorization endpoint (optional)', { exact: true }).fill(`${IDP}/oauth2/authorize`);
    await page.getByLabel('Token endpoint (optional)', { exact: true }).fill(`${IDP}/oauth2/token`);
    await page.getByLabel('Client ID', { exact: true }).fill('identity-broker');
    await page.getByLabel('Client secret', { exact: true }).fill('secret-from-the-provider');
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 1').getByLabel('Scope', { exact: true }).fill('expenses.write');
    await row(page, 'Scope 1')
      .getByLabel('What it lets an agent do (optional)', { exact: true })
      .fill('File expense reports for you');
    await page.getByRole('button', { name: 'Add a resource URI' }).click();
    await page.getByLabel('Resource URI 1', { exact: true }).fill(SERVICE_RESOURCE);
    await page.getByRole('button', { name: 'Register service' }).click();
    await page.getByRole('heading', { level: 1, name: 'Expenses' }).waitFor();
    await page.getByText('Register this redirect URI at the provider').waitFor();
    const serviceId = /\/services\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

    // 3. The MCP server the broker issues tokens for.
    await nav('MCP servers').click();
    await page.getByRole('link', { name: 'Register an MCP server' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('Receipts');
    await page.getByLabel('Resource URI', { exact: true }).fill(MCP_URI);
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 1').getByLabel('Scope', { exact: true }).fill('receipts.read');
    await row(page, 'Scope 1')
      .getByLabel('What it lets an agent do', { exact: true })
      .fill('Read your scanned receipts');
    await page.getByRole('button', { name: 'Register MCP server' }).click();
    await page.getByRole('heading', { level: 1, name: 'Receipts' }).waitFor();
    const resourceId = /\/mcp-servers\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

    // 4. The permission set naming both.
    await nav('Permission sets').click();
    await page
      .getByRole('link', { name: /New permission set/ })
      .first()
      .click();
    await page.getByLabel('Name', { exact: true }).fill('Expense reporting');
    await page.getByRole('button', { name: 'Add a service' }).click();
    await row(page, 'Service 1').getByLabel('Service', { exact: true }).selectOption({ label: 'Expenses' });
    await row(page, 'Service 1')
      .getByRole('checkbox', { name: /expenses\.write/ })
      .check();
    await page.getByRole('button', { name: 'Add an MCP server' }).click();
    await row(page, 'MCP server 1').getByLabel('MCP server', { exact: true }).selectOption({ label: 'Receipts' });
    await row(page, 'MCP server 1')
      .getByRole('checkbox', { name: /receipts\.read/ })
      .check();
    await page.getByRole('button', { name: 'Create permission set' }).click();
    await page.getByRole('heading', { level: 1, name: 'Expense reporting' }).waitFor();
    const setId = /\/permission-sets\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;

    // 5. The agent asks people for it.
    await nav('Agents').click();
    await page.getByRole('link', { name: 'Expense assistant' }).click();
    await page.getByRole('checkbox', { name: /Expense reporting/ }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();

    // 6. A person allows it (their console's consent API), and the admin sees who, what and until when.
    const allowed = await new ApiClient(fx.enduserUrl, ALICE).post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [setId]: [serviceId, resourceId] },
    });
    expect(allowed.status, allowed.text).toBe(201);
    await page.reload();
    const people = page.getByRole('list', { name: 'People who allowed Expense assistant' });
    const alice = people.getByRole('listitem').filter({ hasText: ALICE });
    await alice.getByText('expenses.write', { exact: true }).waitFor();
    await alice.getByText('Permission sets: Expense reporting').waitFor();
    await reviewAdminPage(recorded, 'walk-3-grant-visible');

    // 7. An incident: every grant revoked (the dialog says whose access stops), then the agent suspended.
    await page.getByRole('button', { name: 'Revoke all' }).click();
    const revokeAll = page.getByRole('dialog', { name: 'Revoke every grant of Expense assistant?' });
    await revokeAll.getByText("1 person's access to Expense assistant ends at once.").waitFor();
    await revokeAll.getByText(`Whose access stops: ${ALICE}.`).waitFor();
    await revokeAll.getByRole('button', { name: 'Revoke 1 grant' }).click();
    await page.getByText('Nobody has allowed this agent yet.').waitFor();
    const grants = await fx.admin.get(`/api/agents/${agentId}/grants`);
    expect(grants.json<{ items: unknown[] }>().items).toEqual([]);

    await page.getByRole('button', { name: 'Suspend', exact: true }).click();
    const suspend = page.getByRole('dialog', { name: 'Suspend Expense assistant?' });
    await suspend.getByLabel('Reason (optional)', { exact: true }).fill('Incident 2026-11-29: receipts leaked');
    await suspend.getByRole('button', { name: 'Suspend agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Expense assistant is suspended since' }).waitFor();
    expect(await tokenStatus(agentId, secret)).toBe(401);
    await reviewAdminPage(recorded, 'walk-4-incident');
  });
});
