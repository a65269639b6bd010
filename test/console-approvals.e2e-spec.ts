import { randomUUID } from 'node:crypto';
import { http, type HttpResponse, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from './support/console-fixture';

interface Summary {
  id: string;
  status: string;
  persistence: string | null;
  params_pattern: Record<string, string> | null;
}

/**
 * Issue 15 "Must show" 4 in a real Chromium: a gateway creates an approval, the console's list
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
    agent = (await fx.admin.post('/api/agents', { display_name: 'Files Agent' })).json<{ id: string }>().id;
  });

  afterAll(async () => {
    await fx?.stop();
  });

  /** The gateway asks for approval of a tool call on Alice's behalf. */
  async function create(tool: string, args: Record<string, unknown>, metadata: Record<string, unknown> = {}): Promise<string> {
    const response = await http(`${fx.base}/api/approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agent)}`, 'x-client-assertion': await fx.gateway.assertion() },
      body: JSON.stringify({ tool_name: tool, arguments: args, metadata, risk_level: 'critical' }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  async function sync(headers: Record<string, string> = {}): Promise<HttpResponse> {
    return http(`${fx.base}/api/approvals?principal=${encodeURIComponent(ALICE)}&agent_session_id=session-7`, { headers: { 'x-client-assertion': await fx.gateway.assertion(), ...headers } });
  }

  const summaries = (response: HttpResponse): Summary[] => response.json<{ data: { pairs: { approvals: Summary[] }[] } }>().data.pairs.flatMap((pair) => pair.approvals);

  it('a new request appears by itself, is approved for the session with a pattern after the preview, and the gateway\'s long-poll sees it', async () => {
    const list = await open('/approvals');
    const p = list.page;
    await p.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    // Created while the page is open: the list updates without a reload.
    const id = await create('read_file', { path: '/home/alice/notes/today.md', lines: 10, note: 'x'.repeat(600) }, { agent_session_id: 'session-7' });
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
    await p.getByRole('radio', { name: /Arguments matching patterns/ }).check();
    const path = p.getByRole('textbox', { name: 'path' });
    await path.fill('/home/alice/notes/*');
    // Any value for the other arguments.
    for (const name of ['lines', 'note']) {
      const row = p.locator('.pattern-row').filter({ has: p.getByText(name, { exact: true }) });
      const any = row.getByRole('checkbox', { name: 'Any value' });
      if (!(await any.isChecked())) await any.check();
    }
    // The live scope preview answers for these patterns before the person confirms.
    const preview = p.getByRole('status').filter({ hasText: 'What this approval covers' });
    await expect.poll(() => preview.textContent(), { timeout: 10_000 }).toContain('/home/alice/notes/*');
    await reviewPage(list, 'approval-detail');
    await p.getByRole('button', { name: 'Approve for this session' }).click();
    await p.getByRole('status').filter({ hasText: /approved/i }).first().waitFor();

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
    await p.getByRole('button', { name: 'Approve always' }).click();
    await p.getByRole('status').filter({ hasText: /approved/i }).first().waitFor();

    await p.getByRole('link', { name: 'Remembered', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/approvals/remembered');
    const revoke = p.getByRole('button', { name: 'Revoke send_email for Files Agent' });
    await revoke.waitFor();
    await reviewPage(page, 'remembered');
    await revoke.click();
    const dialog = p.getByRole('dialog');
    await dialog.waitFor();
    await reviewPage(page, 'remembered-revoke');
    await dialog.getByRole('button', { name: /revoke/i }).last().click();
    await revoke.waitFor({ state: 'detached' });
    const permanent = await http(`${fx.base}/api/approvals/permanent`, { headers: { 'x-remote-user': ALICE } });
    expect(permanent.json<{ data: { id: string }[] }>().data.map((a) => a.id)).not.toContain(id);
    expect(page.pageErrors).toEqual([]);
  });

  it('an unknown approval id: a not-found message, never a blank page', async () => {
    const page = await open(`/approvals/${randomUUID()}`);
    await page.page.getByRole('alert').filter({ hasText: /not found/i }).first().waitFor();
    await reviewPage(page, 'approval-not-found');
  });
});
