import { ApiClient, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';
import { grantedAgent, type GrantedAgent } from '../support/granted-agent';

/**
 * In a real Chromium: an agent the broker's administrators suspended (docs/admin-api.md
 * "Suspending an agent") says so on its page, offers nothing to press but revoking, and its
 * authorization requests end on a page that says it is suspended, never at the agent.
 */
describe('console: a suspended agent', () => {
  let fx: ConsoleFixture;
  let agent: GrantedAgent;
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    agent = await grantedAgent({ admin: fx.admin.baseUrl, enduser: fx.base }, [ALICE], 'Expense assistant');
    const suspended = await fx.admin.put(`/api/agents/${agent.id}/suspension`, {
      reason: 'Credentials leaked in a public repository',
    });
    expect(suspended.status, suspended.text).toBe(200);
  });

  afterAll(async () => {
    await fx?.stop();
  });

  it('its page says "Suspended by your administrators" and offers only revoke', async () => {
    const page = await open(`/agents/${agent.id}`);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Expense assistant' }).waitFor();
    await p.getByRole('heading', { level: 2, name: 'Suspended by your administrators' }).waitFor();
    await p.getByText(/cannot act for you, use your connected accounts or ask you for anything/).waitFor();
    // Nothing to allow, deny or change: the one button is revoking.
    expect(await p.locator('main').getByRole('button').allInnerTexts()).toEqual(['Revoke']);
    // The administrator's reason is theirs: the person's page does not show it.
    expect(await p.locator('main').innerText()).not.toContain('Credentials leaked');
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
    await reviewPage(page, 'agent-suspended');
  });

  it('revoking it there ends the grant, and resuming it later does not bring it back', async () => {
    const page = await open(`/agents/${agent.id}`);
    const p = page.page;
    await p.getByRole('button', { name: 'Revoke access for Expense assistant' }).click();
    const dialog = p.getByRole('dialog', { name: 'Revoke access for Expense assistant?' });
    await dialog.getByText('Every service you granted it stops working for it.').waitFor();
    await dialog.getByRole('button', { name: 'Revoke access' }).click();
    await p
      .getByRole('status')
      .getByText(/^Revoked access for Expense assistant/)
      .waitFor();
    // The page re-reads the agent after the answer: its Revoke button goes with the grant.
    await p.getByRole('button', { name: 'Revoke access for Expense assistant' }).waitFor({ state: 'detached' });
    expect(await p.locator('main').getByRole('button').count()).toBe(0);
    await reviewPage(page, 'agent-suspended-revoked');
    expect((await new ApiClient(fx.base, ALICE).get(`/api/consent/agents/${agent.id}/grants`)).json()).toEqual({
      data: [],
    });
    expect((await fx.admin.delete(`/api/agents/${agent.id}/suspension`)).status).toBe(204);
    const resumed = await open(`/agents/${agent.id}`);
    await resumed.page.getByText('This agent does not act for you. You can allow it below.').waitFor();
    expect(await resumed.page.getByText('Suspended by your administrators').count()).toBe(0);
    expect((await fx.admin.put(`/api/agents/${agent.id}/suspension`, {})).status).toBe(200);
  });

  it('an authorization request of the suspended agent ends on a page that says so: 403, never sent to the agent', async () => {
    const admin = fx.admin;
    const registered = await admin.put(`/api/agents/${agent.id}`, {
      display_name: 'Expense assistant',
      redirect_uris: ['https://agent.example.com/cb'],
      permission_sets: (await admin.get(`/api/agents/${agent.id}`)).json<{ permission_sets: unknown[] }>()
        .permission_sets,
    });
    expect(registered.status, registered.text).toBe(200);
    const query = new URLSearchParams({
      client_id: agent.id,
      redirect_uri: 'https://agent.example.com/cb',
      response_type: 'code',
      state: 'xyz',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const page = await fx.blank(ALICE);
    const response = await page.page.goto(`${fx.base}/oauth2/authorize?${query.toString()}`);
    await page.page.locator('main').first().waitFor();
    expect(response?.status()).toBe(403);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Suspended by your administrators' }).waitFor();
    await p.getByText(/Ask your administrators when it will work again/).waitFor();
    expect(p.url()).toContain(fx.base);
    expect(await p.locator('body').innerText()).not.toMatch(/access_denied|agent\.example\.com|\{/);
    await expect.poll(() => p.title()).toBe('Request not accepted · Agent Identity Broker');
    await reviewPage(page, 'authorize-agent-suspended');
  });
});
