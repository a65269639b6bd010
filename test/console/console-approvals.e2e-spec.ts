import { randomUUID } from 'node:crypto';
import { http, type HttpResponse, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';
import { grantedAgent } from '../support/granted-agent';

interface Summary {
  id: string;
  status: string;
  persistence: string | null;
  params_pattern: Record<string, string> | null;
}

/**
 * in a real Chromium: a gateway creates an approval, the console's list
 * shows it by itself, the person approves it for the session with a per-argument pattern after
 * seeing the scope preview, and the gateway's long-poll sync sees it approved; a permanent
 * approval appears under Remembered and revoking it there removes it.
 */
describe('console: tool approvals in a browser', () => {
  let fx: ConsoleFixture;
  let agent: string;
  // Pages close with the fixture's browser.
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    // Alice allows the agent: only then may its gateway ask her (docs/approvals.md "Grants and approvals").
    agent = (await grantedAgent({ admin: fx.admin.baseUrl, enduser: fx.base }, [ALICE], 'Files Agent')).id;
  });

  afterAll(async () => {
    await fx?.stop();
  });

  /** The gateway asks for approval of a tool call on Alice's behalf. */
  async function create(
    tool: string,
    args: Record<string, unknown>,
    metadata: Record<string, unknown> = {},
    risk: 'low' | 'medium' | 'critical' = 'critical',
  ): Promise<string> {
    const response = await http(`${fx.base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agent)}`,
        'x-client-assertion': await fx.gateway.assertion(),
      },
      body: JSON.stringify({ tool_name: tool, arguments: args, metadata, risk_level: risk }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  async function sync(headers: Record<string, string> = {}): Promise<HttpResponse> {
    return http(`${fx.base}/api/approvals?principal=${encodeURIComponent(ALICE)}&agent_session_id=session-7`, {
      headers: { 'x-client-assertion': await fx.gateway.assertion(), ...headers },
    });
  }

  const summaries = (response: HttpResponse): Summary[] =>
    response.json<{ data: { pairs: { approvals: Summary[] }[] } }>().data.pairs.flatMap((pair) => pair.approvals);

  it("a new request appears by itself, is approved for the session with a pattern after the preview, and the gateway's long-poll sees it", async () => {
    const list = await open('/approvals');
    const p = list.page;
    await p.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    // Created while the page is open: the list updates without a reload.
    const id = await create(
      'read_file',
      { path: '/home/alice/notes/today.md', lines: 10, note: 'x'.repeat(600) },
      { agent_session_id: 'session-7' },
    );
    await p.getByRole('link', { name: 'Review read_file from Files Agent' }).waitFor({ timeout: 15_000 });
    await reviewPage(list, 'approvals');

    const current = await sync();
    expect(current.status).toBe(200);
    const etag = current.headers.etag as string;
    // The gateway waits for a change (long poll) while the person decides.
    const waiting = sync({ 'if-none-match': etag, 'x-long-poll-timeout': '30' });

    await p.getByRole('link', { name: 'Review read_file from Files Agent' }).click();
    await p.waitForURL((url) => url.pathname === `/approvals/${id}`);
    await p.getByRole('radio', { name: /This agent session/ }).check();
    // Choices in words, not globs: any file in the folder, any value for the other arguments.
    await p.getByLabel('path', { exact: true }).selectOption({ label: 'Any file in /home/alice/notes' });
    await p.getByLabel('lines', { exact: true }).selectOption({ label: 'Any lines' });
    await p.getByLabel('note', { exact: true }).selectOption({ label: 'Any note' });
    // What the choices cover, in words, once the broker has checked them.
    const preview = p.getByRole('status').filter({ hasText: 'What this approval covers' });
    await expect
      .poll(() => preview.textContent(), { timeout: 10_000 })
      .toMatch(/any file in \/home\/alice\/notes(?![\s\S]*Checking)/);
    await reviewPage(list, 'approval-detail');
    await p.getByRole('button', { name: 'Approve for this session' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /approved/i })
      .first()
      .waitFor();

    const changed = await waiting;
    expect(changed.status, 'the long poll answers with the change').toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const approved = summaries(changed).find((s) => s.id === id);
    expect(approved).toMatchObject({ status: 'approved', persistence: 'session' });
    expect(approved?.params_pattern?.path).toBe('/home/alice/notes/*');
    expect(list.pageErrors).toEqual([]);
    expect(list.dialogs).toEqual([]);
  });

  it('an approval given always is listed under Remembered; revoking it there removes it', async () => {
    const id = await create('send_email', { to: 'bob@example.com', subject: `Report ${randomUUID()}` });
    const page = await open(`/approvals/${id}`);
    const p = page.page;
    await p.getByRole('radio', { name: /^Always/ }).check();
    // A critical tool: "always" is confirmed a second time; Cancel decides nothing.
    await p.getByRole('button', { name: 'Approve always…' }).click();
    const confirm = p.getByRole('dialog', { name: 'Always allow a critical tool?' });
    await confirm.waitFor();
    await reviewPage(page, 'approval-always-critical');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(
      (await http(`${fx.base}/api/approvals/${id}`, { headers: { 'x-remote-user': ALICE } })).json<{
        data: { status: string };
      }>().data.status,
    ).toBe('pending');
    await p.getByRole('button', { name: 'Approve always…' }).click();
    await confirm.getByRole('button', { name: 'Yes, always allow' }).click();
    const approvedNotice = p
      .getByRole('status')
      .filter({ hasText: /approved/i })
      .first();
    await approvedNotice.waitFor();
    // "Always" has no end: the notice names no time that could read as one.
    const noticeText = await approvedNotice.innerText();
    expect(noticeText).toContain('until you revoke it');
    expect(noticeText).not.toMatch(/\d:\d\d/);

    await p.getByRole('link', { name: 'Remembered', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/approvals/remembered');
    const revoke = p.getByRole('button', { name: 'Revoke send_email for Files Agent' });
    await revoke.waitFor();
    await reviewPage(page, 'remembered');
    await revoke.click();
    const dialog = p.getByRole('dialog');
    await dialog.waitFor();
    await reviewPage(page, 'remembered-revoke');
    // The broker does not answer: the failure is shown in the dialog, which stays open for another try.
    await p.route('**/api/approvals/*/revoke', (route) => route.abort());
    await dialog
      .getByRole('button', { name: /revoke/i })
      .last()
      .click();
    await dialog.getByRole('alert').filter({ hasText: 'The broker cannot be reached' }).waitFor();
    expect(await dialog.isVisible()).toBe(true);
    await reviewPage(page, 'remembered-revoke-failed');
    await p.unroute('**/api/approvals/*/revoke');
    await dialog
      .getByRole('button', { name: /revoke/i })
      .last()
      .click();
    await revoke.waitFor({ state: 'detached' });
    // What stopped, said in a status message; focus on the page's heading, not lost with the removed card.
    await p
      .getByRole('status')
      .filter({ hasText: 'Revoked: Files Agent can no longer run send_email without asking' })
      .waitFor();
    expect(await p.locator('h1:focus').allInnerTexts()).toEqual(['Remembered decisions']);
    await reviewPage(page, 'remembered-revoked');
    const permanent = await http(`${fx.base}/api/approvals/permanent`, { headers: { 'x-remote-user': ALICE } });
    expect(permanent.json<{ data: { id: string }[] }>().data.map((a) => a.id)).not.toContain(id);
    expect(page.pageErrors).toEqual([]);
  });

  it("a request in plain words: critical first, the agent's reason and the tool first, arguments as structured values, choices in words, errors in words", async () => {
    const search = await create(
      'search_documents',
      {
        filters: { folders: ['/reports', '/finance'], modified_after: '2026-01-01' },
        query: 'quarterly revenue',
        limit: 20,
      },
      {
        reason: 'You asked me to summarise the Q3 revenue.',
        tool_title: 'Search your documents',
        tool_description: 'Finds documents in your drive by text and folder.',
      },
      'critical',
    );
    // Newer, but low risk: listed after the critical one.
    await create('list_files', { folder: '/tmp' }, {}, 'low');
    const recorded = await open('/approvals');
    const p = recorded.page;
    const cards = p.locator('ul[aria-label="Pending approvals"] > li');
    await cards.first().waitFor();
    const first = await cards.first().innerText();
    expect(first).toContain('Search your documents');
    expect(first).toContain('Critical risk');
    expect(first).toContain('You asked me to summarise the Q3 revenue.');
    expect((await cards.allInnerTexts()).findIndex((text) => text.includes('list_files'))).toBeGreaterThan(0);
    await reviewPage(recorded, 'approvals-critical-first');

    // The broker stops answering: the list stays, with a banner and Retry.
    await p.route('**/api/approvals/pending', (route) => route.abort());
    const banner = p.getByRole('status').filter({ hasText: 'The broker is not answering' });
    await banner.waitFor({ timeout: 30_000 });
    expect(await cards.count()).toBeGreaterThan(1);
    await reviewPage(recorded, 'approvals-reconnecting');
    await p.unroute('**/api/approvals/pending');
    // (A poll may get through first and remove the banner: then there is nothing left to retry.)
    await banner
      .getByRole('button', { name: 'Retry' })
      .click({ timeout: 5_000 })
      .catch(async (error: unknown) => {
        if ((await banner.count()) > 0) throw error;
      });
    await banner.waitFor({ state: 'detached', timeout: 15_000 });

    await p.getByRole('link', { name: 'Review Search your documents from Files Agent' }).click();
    await p.waitForURL((url) => url.pathname === `/approvals/${search}`);
    await p.getByRole('heading', { level: 1, name: /Search your documents/ }).waitFor();
    // The reason and what the tool does come before the request's details, open, without a click.
    const why = p.getByRole('region', { name: 'Why Files Agent asks' });
    expect(await why.isVisible()).toBe(true);
    expect(await why.innerText()).toContain('Finds documents in your drive by text and folder.');
    const order = await p.locator('h2').allInnerTexts();
    expect(order.indexOf('Why Files Agent asks')).toBeLessThan(order.indexOf('The request'));
    // Arguments as structured values: the folders as a list, never escaped JSON.
    const request = p.getByRole('region', { name: 'The request' });
    const requestText = await request.innerText();
    expect(await request.locator('.arg-items > li').allInnerTexts()).toEqual(['/reports', '/finance']);
    expect(requestText).toContain('modified_after');
    expect(requestText).not.toMatch(/[{}"\\]/);

    // Choices per argument; a pattern of one's own that leaves out the reviewed value is explained in words.
    await p.getByRole('radio', { name: /^Always/ }).check();
    await p.getByLabel('query', { exact: true }).selectOption({ label: 'My own pattern (advanced)' });
    await p.getByLabel('Pattern for query').fill('annual*');
    const preview = p.getByRole('status').filter({ hasText: 'What this approval covers' });
    await expect
      .poll(() => preview.innerText(), { timeout: 10_000 })
      .toContain('The choice for “query” leaves out the value you reviewed');
    expect(await preview.innerText()).not.toContain('params_pattern');
    await reviewPage(recorded, 'approval-pattern-error');
    await p.getByLabel('query', { exact: true }).selectOption({ label: 'Any query' });
    await expect.poll(() => preview.innerText(), { timeout: 10_000 }).toMatch(/query\s+any value/);
    expect(await preview.innerText()).not.toMatch(/[{}"\\]/);
    await reviewPage(recorded, 'approval-plain-words');
    await p.getByRole('button', { name: 'Approve always…' }).click();
    await p.getByRole('dialog').getByRole('button', { name: 'Yes, always allow' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /approved always/i })
      .waitFor();

    // Remembered: the structured value in words, never `filters matches "{\"folders\":[…]}"`.
    await p.getByRole('link', { name: 'Remembered', exact: true }).click();
    const card = p.locator('li.card', { hasText: 'Search your documents' });
    await card.waitFor();
    const remembered = card.locator('.remembered-scope');
    expect(await remembered.locator('.arg-items > li').allInnerTexts()).toEqual(['/reports', '/finance']);
    expect(await remembered.innerText()).not.toMatch(/[{}"\\]/);
    await reviewPage(recorded, 'remembered-structured');
    expect(recorded.pageErrors).toEqual([]);
  });

  it('an unknown approval id: a not-found message, never a blank page', async () => {
    const page = await open(`/approvals/${randomUUID()}`);
    await page.page
      .getByRole('alert')
      .filter({ hasText: /not found/i })
      .first()
      .waitFor();
    await reviewPage(page, 'approval-not-found');
  });
});
