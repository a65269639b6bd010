import { randomUUID } from 'node:crypto';
import { ApiClient, http, type RecordedPage } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';
import { grantedAgent } from '../support/granted-agent';

const HOSTILE = '<img src=x onerror="window.__pwned=1;alert(1)">';

/**
 * in a real Chromium against a real broker serving its console:
 * connect a service through oidc-provider's login, Refresh, Disconnect after the affected agents,
 * a failed callback's message; a gateway's approval approved for the session with a pattern after
 * the preview (the gateway's sync sees it), a permanent one under Remembered and revoked.
 */
describe('console: connections and approvals in a browser', () => {
  let fx: ConsoleFixture;
  // Pages close with the fixture's browser.
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture({ thirdParty: true });
  });

  afterAll(async () => {
    await fx?.stop();
  });

  /** oidc-provider's development interaction pages, in the browser: sign in, then consent. */
  async function passProvider(page: Page): Promise<void> {
    const providerOrigin = new URL(fx.provider?.issuer as string).origin;
    for (let step = 0; step < 4 && new URL(page.url()).origin === providerOrigin; step += 1) {
      const login = page.locator('input[name="login"]');
      if ((await login.count()) > 0) {
        await login.fill('provider-user');
        await page.locator('input[name="password"]').fill('any');
      }
      const before = page.url();
      await Promise.all([
        page.waitForURL((url) => url.toString() !== before),
        page.locator('form:has(input[name="prompt"]) [type="submit"]').first().click(),
      ]);
    }
  }

  it('connects a service, refreshes it and disconnects it after listing the affected agents', async () => {
    // An agent delegated the service (the broker asks the provider for the granted scopes): the disconnect dialog names it.
    const setId = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Read mail',
        description: 'Reads your inbox',
        service_scopes: [{ service_id: fx.serviceId, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const agentId = (
      await fx.admin.post('/api/agents', {
        display_name: 'Inbox Helper',
        permission_sets: [{ permission_set_id: setId }],
      })
    ).json<{ id: string }>().id;
    const grant = await new ApiClient(fx.base, ALICE).post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [setId]: [fx.serviceId] },
    });
    expect(grant.status, grant.text).toBeLessThan(300);
    const recorded = await open('/connections');
    const { page } = recorded;
    const card = page.locator('li.card', { hasText: 'Mail' });
    await card.getByText('Not connected', { exact: true }).waitFor();
    await reviewPage(recorded, 'connections-empty');
    const href = (await card.getByRole('link', { name: 'Connect Mail' }).getAttribute('href')) as string;
    expect(href).toBe(
      `/api/third-party/${fx.serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${fx.base}/connections`)}`,
    );
    await Promise.all([
      page.waitForURL((url) => !url.toString().startsWith(fx.base)),
      card.getByRole('link', { name: 'Connect Mail' }).click(),
    ]);
    await passProvider(page);
    await page.waitForURL(`${fx.base}/connections`);
    await page.waitForURL(`${fx.base}/connections`);
    await page.getByText('Mail is connected.').waitFor();
    expect(new URL(page.url()).search, 'the callback parameters leave the address bar').toBe('');
    await card.getByText('Connected', { exact: true }).waitFor();
    await reviewPage(recorded, 'connections-connected');

    await card.getByRole('button', { name: 'Refresh Mail' }).click();
    await card.getByText(/^Refreshed\./).waitFor();

    await card.getByText('1 agent depends on it').waitFor();
    await card.getByRole('button', { name: 'Disconnect Mail' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Inbox Helper').waitFor();
    await expect(dialog.getByText('1 agent will lose access to Mail:').isVisible()).resolves.toBe(true);
    await reviewPage(recorded, 'connections-disconnect');
    await dialog.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await page.getByText('Mail is disconnected. 1 agent lost access to it.').waitFor();
    await card.getByText('Not connected', { exact: true }).waitFor();
    expect(recorded.dialogs).toEqual([]);
    expect(recorded.pageErrors).toEqual([]);
  });

  it("shows a failed callback in the broker's words (never the address's error_description) and removes its parameters from the address bar", async () => {
    const recorded = await open(
      `/connections?error=access_denied&error_description=${encodeURIComponent(HOSTILE)}&keep=1`,
    );
    const { page } = recorded;
    const alert = page.getByRole('alert');
    await alert.getByText('Connecting failed.').waitFor();
    expect(await alert.textContent()).toContain(
      'The connection was cancelled at the provider, or access was not granted there.',
    );
    expect(await page.locator('main').textContent()).not.toContain('onerror');
    expect(new URL(page.url()).search).toBe('?keep=1');
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(recorded.dialogs).toEqual([]);
    await reviewPage(recorded, 'connections-error');
  });

  async function createApproval(
    agentId: string,
    tool: string,
    args: Record<string, unknown>,
    metadata: Record<string, unknown> = {},
  ): Promise<string> {
    const response = await http(`${fx.base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agentId)}`,
        'x-client-assertion': await fx.gateway.assertion(),
      },
      body: JSON.stringify({ tool_name: tool, arguments: args, metadata, risk_level: 'critical' }),
    });
    expect(response.status, response.text).toBe(201);
    return (JSON.parse(response.text) as { data: { id: string } }).data.id;
  }

  it('approves for the session with a pattern after the preview; the gateway sync sees it', async () => {
    const agentId = (await grantedAgent({ admin: fx.admin.baseUrl, enduser: fx.base }, [ALICE], 'File Agent')).id;
    const recorded = await open('/approvals');
    const { page } = recorded;
    await page.getByText('Nothing is waiting for you.').waitFor();
    const id = await createApproval(
      agentId,
      'files.read',
      { path: '/home/alice/report.txt', lines: 20, note: 'x'.repeat(400) },
      { agent_session_id: 'session-1' },
    );
    // The list refreshes by itself.
    await page.getByRole('link', { name: 'files.read', exact: true }).waitFor({ timeout: 10_000 });
    await page.getByText('Critical risk').waitFor();
    await reviewPage(recorded, 'approvals-pending');

    await page.getByRole('link', { name: 'Review files.read from File Agent' }).click();
    await page.waitForURL(`${fx.base}/approvals/${id}`);
    await page.getByRole('button', { name: 'Show all 400 characters' }).click();
    await page.getByRole('radio', { name: /This agent session/ }).check();
    // Each argument is a choice; a glob of one's own is the advanced choice.
    await page.getByLabel('path', { exact: true }).selectOption({ label: 'My own pattern (advanced)' });
    await page.getByLabel('Pattern for path').fill('/home/alice/*.txt');
    await page.getByLabel('note', { exact: true }).selectOption({ label: 'Any note' });
    const preview = page.getByRole('status').filter({ hasText: 'What this approval covers' });
    await expect
      .poll(() => preview.innerText(), { timeout: 10_000 })
      .toMatch(/\/home\/alice\/\*\.txt(?![\s\S]*Checking)/);
    // A pattern that does not cover the reviewed value is refused by the preview, in words, and approve is disabled.
    await page.getByLabel('Pattern for path').fill('/tmp/*');
    await expect
      .poll(() => preview.innerText(), { timeout: 10_000 })
      .toContain('The choice for “path” leaves out the value you reviewed');
    await expect(page.getByRole('button', { name: 'Approve for this session' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Pattern for path').fill('/home/alice/*.txt');
    await expect
      .poll(() => preview.innerText(), { timeout: 10_000 })
      .toMatch(/\/home\/alice\/\*\.txt(?![\s\S]*(Checking|leaves out))/);
    await expect.poll(() => page.getByRole('button', { name: 'Approve for this session' }).isDisabled()).toBe(false);
    await reviewPage(recorded, 'approval-detail');
    await page.getByRole('button', { name: 'Approve for this session' }).click();
    await page.getByText(/^Approved for this agent session/).waitFor();
    await reviewPage(recorded, 'approval-decided');

    const sync = await http(
      `${fx.base}/api/approvals?principal=${encodeURIComponent(ALICE)}&agent_session_id=session-1`,
      { headers: { 'x-client-assertion': await fx.gateway.assertion() } },
    );
    const approvals = (
      JSON.parse(sync.text) as {
        data: {
          pairs: {
            approvals: { id: string; status: string; persistence: string; params_pattern: Record<string, string> }[];
          }[];
        };
      }
    ).data.pairs.flatMap((pair) => pair.approvals);
    expect(approvals.find((approval) => approval.id === id)).toMatchObject({
      status: 'approved',
      persistence: 'session',
      params_pattern: { path: '/home/alice/*.txt', lines: '20' },
    });
    expect(recorded.dialogs).toEqual([]);
  });

  it('lists a permanent approval under Remembered and revokes it after a confirmation', async () => {
    const agentId = (await grantedAgent({ admin: fx.admin.baseUrl, enduser: fx.base }, [ALICE], 'Deploy Agent')).id;
    const id = await createApproval(agentId, 'deploy.run', { target: 'staging' });
    const recorded = await open(`/approvals/${id}`);
    const { page } = recorded;
    await page.getByRole('radio', { name: /^Always/ }).check();
    // A critical tool: "always" is confirmed a second time.
    await page.getByRole('button', { name: 'Approve always…' }).click();
    await page
      .getByRole('dialog', { name: 'Always allow a critical tool?' })
      .getByRole('button', { name: 'Yes, always allow' })
      .click();
    await page.getByText(/^Approved always/).waitFor();
    await page.getByRole('link', { name: 'Remembered', exact: true }).click();
    await page.getByText('deploy.run', { exact: true }).waitFor();
    await reviewPage(recorded, 'approvals-remembered');
    await page.getByRole('button', { name: 'Revoke deploy.run for Deploy Agent' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Revoked: Deploy Agent can no longer run deploy.run without asking' })
      .waitFor();
    await page.getByText('You have no remembered decisions.').waitFor();
  });

  it('says so for an unknown approval and for one already decided', async () => {
    const recorded = await open(`/approvals/${randomUUID()}`);
    await recorded.page.getByRole('heading', { name: 'Approval not found' }).waitFor();
    const agentId = (await grantedAgent({ admin: fx.admin.baseUrl, enduser: fx.base }, [ALICE], 'Race Agent')).id;
    const id = await createApproval(agentId, 'race.tool', { a: 1 });
    const { page } = await open(`/approvals/${id}`);
    await page.getByRole('button', { name: 'Deny this call' }).waitFor();
    const denied = await http(`${fx.base}/api/approvals/${id}/deny`, {
      method: 'POST',
      headers: { 'x-remote-user': ALICE, 'content-type': 'application/json', origin: fx.base },
      body: '{}',
    });
    expect(denied.status, denied.text).toBe(200);
    await page.getByRole('button', { name: 'Deny this call' }).click();
    await page.getByText(/no longer pending/).waitFor();
    await page.getByText('Denied', { exact: true }).waitFor();
  });
});
