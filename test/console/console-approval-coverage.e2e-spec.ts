import { http, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

/**
 * In a real Chromium: before the person decides, the approval form says beside "Always" what an "Always" (or
 * session) approval would allow with the argument choices as they stand: which arguments are pinned to which
 * values and, once one is widened, that every other argument may be anything (docs/approvals.md, "Parameter
 * patterns"); the words follow the choices.
 */
describe('console: what "Always" allows, said before deciding', () => {
  let fx: ConsoleFixture;
  let agent: string;
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    const service = await fx.admin.post('/api/services', {
      display_name: 'Drive',
      client_id: 'drive-client',
      client_secret: 'not-used-here',
      issuer_uri: 'https://drive.example.com',
      authorization_endpoint: 'https://drive.example.com/authorize',
      token_endpoint: 'https://drive.example.com/token',
      scopes: [{ scope: 'files.write', description: 'Change your files' }],
      protected_resources: ['https://drive.example.com/api'],
    });
    expect(service.status, service.text).toBe(201);
    const serviceId = service.json<{ id: string }>().id;
    const set = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Drive',
        service_scopes: [{ service_id: serviceId, scopes: ['files.write'] }],
      })
    ).json<{ id: string }>().id;
    agent = (
      await fx.admin.post('/api/agents', { display_name: 'Files Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    // The agent acts for Alice: approvals are asked for agents she allowed.
    const grant = await http(`${fx.base}/api/consent/agents/${agent}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': ALICE, 'content-type': 'application/json', origin: fx.base },
      body: JSON.stringify({ granted_permission_sets: { [set]: [serviceId] } }),
    });
    expect(grant.status, grant.text).toBe(201);
  });

  afterAll(async () => {
    await fx?.stop();
  });

  async function create(args: Record<string, unknown>): Promise<string> {
    const response = await http(`${fx.base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agent)}`,
        'x-client-assertion': await fx.gateway.assertion(),
      },
      body: JSON.stringify({
        tool_name: 'drive.share_file',
        arguments: args,
        metadata: { tool_title: 'Share a file', agent_session_id: 'session-1' },
        risk_level: 'medium',
      }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  it('names the pinned arguments and their values beside "Always" before any choice, and says every other argument may be anything once one is widened', async () => {
    const id = await create({ path: '/reports/q3.pdf', share_with: 'bob@example.com' });
    const page = await open(`/approvals/${id}`);
    const p = page.page;
    const always = p.getByRole('radio', { name: /^Always/ });
    await always.waitFor();
    // Nothing chosen yet ("Only this call" is selected): the note is already there, beside "Always".
    expect(await p.getByRole('radio', { name: /^Only this call/ }).isChecked()).toBe(true);
    const note = p.locator('.coverage-note');
    const before = await note.innerText();
    expect(before).toContain(
      'With “Always” or “This agent session”, Files Agent may run Share a file without asking you.',
    );
    expect(before).toContain(
      'Only calls whose path is exactly “/reports/q3.pdf” and whose share_with is exactly “bob@example.com”.',
    );
    expect(before).toContain('with an argument this call does not have, asks you again');
    expect(before).not.toContain('may be anything');
    // The radio buttons are described by it, so a screen reader hears it with the choice.
    expect(await always.getAttribute('aria-describedby')).toBe(await note.getAttribute('id'));
    await reviewPage(page, 'approval-always-before');

    // Widening one argument: the other stays pinned, and every argument not named is free.
    await always.check();
    await p.getByLabel('path', { exact: true }).selectOption({ label: 'Any file in /reports' });
    await expect
      .poll(() => note.innerText())
      .toContain('Calls whose path is any file in /reports and whose share_with is exactly “bob@example.com”.');
    const widened = await note.innerText();
    expect(widened).toContain('Every other argument may be anything too, including arguments this call does not have.');
    await p.getByLabel('share_with', { exact: true }).selectOption({ label: 'Any share_with' });
    await expect.poll(() => note.innerText()).toContain('share_with may be anything.');
    await reviewPage(page, 'approval-always-widened');

    // What the form said is what the broker stores.
    await p.getByRole('button', { name: 'Approve always' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /approved always/i })
      .waitFor();
    const stored = await http(`${fx.base}/api/approvals/${id}`, { headers: { 'x-remote-user': ALICE } });
    expect(stored.json<{ data: { params_pattern: unknown } }>().data.params_pattern).toEqual({ path: '/reports/*' });
    expect(page.pageErrors).toEqual([]);
  });
});
