import { randomUUID } from 'node:crypto';
import { type AnyBrokerEvent, type EventToAppend } from '@broker/events';
import { EventRepository } from '@broker/persistence';
import { ApiClient, http } from '@broker/testing';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

/**
 * In a real Chromium: the Activity page in the registry's words. An agent whose access the person revoked stays in
 * the agent filter (marked), with its history; scopes read as their descriptions and MCP servers by name (the code
 * and the address small beside); an approval request already decided says what became of it and links to it,
 * never "Waiting for you"; one still waiting says so and links to its review; the tool by the gateway's title.
 */
describe('console: activity in words', () => {
  let fx: ConsoleFixture;
  let alice: ApiClient;
  let ledger: EventRepository;
  let mail: string;
  let mailAgent: string;
  let hrAgent: string;
  let pending: string;
  let decided: string;
  const HR = 'https://hr.example.com/mcp';

  function event(minutesAgo: number, e: AnyBrokerEvent): EventToAppend {
    return { id: randomUUID(), occurredAt: new Date(Date.now() - minutesAgo * 60_000), event: e };
  }

  /** The gateway asks Alice to approve a call of the agent's (the HR agent's unless named). */
  async function ask(tool: string, args: Record<string, unknown>, title: string, agent?: string): Promise<string> {
    const response = await http(`${fx.base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agent ?? hrAgent)}`,
        'x-client-assertion': await fx.gateway.assertion(),
      },
      body: JSON.stringify({ tool_name: tool, arguments: args, metadata: { tool_title: title }, risk_level: 'low' }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  beforeAll(async () => {
    fx = await startConsoleFixture();
    alice = new ApiClient(fx.base, ALICE);
    ledger = fx.broker.broker.server('enduser').app.get(EventRepository);
    const service = await fx.admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'mail-client',
      client_secret: 'not-used-here',
      issuer_uri: 'https://mail.example.com',
      authorization_endpoint: 'https://mail.example.com/authorize',
      token_endpoint: 'https://mail.example.com/token',
      scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
      protected_resources: ['https://mail.example.com/api'],
    });
    expect(service.status, service.text).toBe(201);
    mail = service.json<{ id: string }>().id;
    const resource = await fx.admin.post('/api/resources', {
      display_name: 'HR records',
      resource_uri: HR,
      scopes: [{ scope: 'hr:read', description: 'See your HR records' }],
    });
    expect(resource.status, resource.text).toBe(201);
    const set = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const agent = async (name: string): Promise<string> =>
      (await fx.admin.post('/api/agents', { display_name: name, permission_sets: [{ permission_set_id: set }] })).json<{
        id: string;
      }>().id;
    mailAgent = await agent('Mail Agent');
    hrAgent = await agent('HR Agent');
    for (const id of [mailAgent, hrAgent]) {
      const grant = await alice.post(`/api/consent/agents/${id}/grants`, {
        granted_permission_sets: { [set]: [mail] },
      });
      expect(grant.status, grant.text).toBe(201);
    }
    await ledger.append([
      event(50, {
        type: 'session.connected',
        actor: { type: 'principal', id: ALICE },
        principal: ALICE,
        agentId: null,
        serviceId: mail,
        outcome: 'success',
        traceId: null,
        // A scope the registry does not describe (any more) keeps its code.
        details: { scopes: ['mail.read', 'mail.archive'] },
      }),
      event(40, {
        type: 'token.exchanged',
        actor: { type: 'gateway', id: 'mcp-gateway' },
        principal: ALICE,
        agentId: mailAgent,
        serviceId: mail,
        outcome: 'success',
        traceId: null,
        details: { resource: 'https://mail.example.com/api', oauth_error: null },
      }),
      event(30, {
        type: 'enterprise_access.decided',
        actor: { type: 'agent', id: hrAgent },
        principal: ALICE,
        agentId: hrAgent,
        serviceId: null,
        outcome: 'success',
        traceId: null,
        details: {
          authorization_id: randomUUID(),
          issuer: 'https://idp.example.com',
          resource: HR,
          scopes: ['hr:read'],
          oauth_error: null,
        },
      }),
    ]);
    // Real requests, recorded as the broker records them; one decided "always" since.
    pending = await ask('send_email', { to: 'team@example.com' }, 'Send an email');
    decided = await ask('read_record', { employee: 'alice' }, 'Read an HR record');
    const approved = await alice.post(`/api/approvals/${decided}/approve`, { persistence: 'permanent' });
    expect(approved.status, approved.text).toBe(200);
    // A request of the Mail Agent's still waits when Alice revokes it: the revocation ends it unanswered.
    await ask('archive_mail', { folder: 'old' }, 'Archive mail', mailAgent);
    // Alice revokes the Mail Agent: its history stays, and so must its place in the filter.
    const revoked = await alice.delete(`/api/consent/agents/${mailAgent}/grants`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
  });

  afterAll(async () => {
    await fx?.stop();
  });

  const rows = (page: Page): Locator => page.locator('.activity-days ol > li');
  const row = (page: Page, title: string, text: string): Locator =>
    rows(page)
      .filter({ has: page.getByRole('heading', { name: title, exact: true }) })
      .filter({ hasText: text });

  it('keeps a revoked agent in the filter, marked, and its history under it', async () => {
    const recorded = await fx.open('/activity', ALICE);
    const { page } = recorded;
    await rows(page).first().waitFor();
    const filter = page.getByLabel('Agent', { exact: true });
    await expect
      .poll(() => filter.locator('optgroup[label="No longer allowed"] > option').allInnerTexts())
      .toEqual(['Mail Agent']);
    expect(await filter.locator('optgroup[label="Allowed now"] > option').allInnerTexts()).toEqual(['HR Agent']);
    await filter.selectOption({ label: 'Mail Agent' });
    await page.waitForURL((url) => url.searchParams.get('agent') === mailAgent);
    // Chosen, it is said in words under the list (and read with it).
    const note = page.getByText('No longer allowed: Mail Agent cannot use your access now. Its history stays.');
    await note.waitFor();
    expect(await filter.getAttribute('aria-describedby')).toBe(await note.getAttribute('id'));
    await expect
      .poll(async () => (await rows(page).allInnerTexts()).every((text) => text.includes('Agent: Mail Agent')))
      .toBe(true);
    // Its request, ended by the revocation: said so, never "Waiting for you" nor a decision Alice did not make.
    const ended = row(page, 'Approval requested', 'archive_mail');
    await expect.poll(() => ended.locator('.badge').innerText()).toBe('Revoked');
    await expect
      .poll(() => ended.innerText())
      .toMatch(/Since\s+It ended without a decision when the agent’s access was revoked/);
    expect(await ended.getByRole('link').innerText()).toBe('See the request');
    const titles = await rows(page).locator('h3').allInnerTexts();
    expect(titles).toEqual(expect.arrayContaining(['Token used', 'Access granted', 'Access revoked']));
    await reviewPage(recorded, 'activity-revoked-agent');
    expect(recorded.pageErrors).toEqual([]);
  });

  it('says scopes and MCP servers in the registry’s words, and what became of each approval request', async () => {
    const recorded = await fx.open('/activity', ALICE);
    const { page } = recorded;
    await rows(page).first().waitFor();

    // Scopes by their descriptions, the code small beside; an undescribed one by its code.
    const connected = row(page, 'Service connected', 'Mail');
    await expect.poll(() => connected.innerText()).toContain('Read your mail');
    const scopes = await connected.locator('.activity-scopes > li').allInnerTexts();
    expect(scopes).toEqual(['Read your mail mail.read', 'mail.archive']);
    expect(await connected.locator('.activity-scopes .activity-code').allInnerTexts()).toEqual(['mail.read']);

    // The MCP server by name, its address beside; its scope in words.
    const organisation = row(page, 'Allowed by your organisation', 'HR Agent');
    await expect.poll(() => organisation.innerText()).toMatch(/MCP server\s+HR records/);
    const allowed = await organisation.innerText();
    expect(allowed).toContain(HR);
    expect(allowed).toContain('See your HR records');
    expect(await organisation.locator('.activity-code').allInnerTexts()).toEqual([HR, 'hr:read']);

    // The decided request: what became of it and a link to it, never "Waiting for you"; the tool by its title.
    const done = row(page, 'Approval requested', 'read_record');
    await expect.poll(() => done.locator('.badge').innerText()).toBe('Approved');
    await expect.poll(() => done.innerText()).toMatch(/Since\s+You approved it always, until you revoke it/);
    const doneText = await done.innerText();
    expect(doneText).not.toContain('Waiting for you');
    expect(doneText).toMatch(/Tool\s+Read an HR record read_record/);
    expect(await done.getByRole('link', { name: 'See the decision' }).getAttribute('href')).toBe(
      `/approvals/${decided}`,
    );
    // The one still waiting says so, and leads to its review.
    const waiting = row(page, 'Approval requested', 'send_email');
    await expect.poll(() => waiting.locator('.badge').innerText()).toBe('Waiting for you');
    expect(await waiting.innerText()).toMatch(/Tool\s+Send an email send_email/);
    await reviewPage(recorded, 'activity-words');
    await waiting.getByRole('link', { name: 'Review it' }).click();
    await page.waitForURL((url) => url.pathname === `/approvals/${pending}`);
    await page.getByRole('heading', { level: 1, name: /Send an email/ }).waitFor();
    expect(recorded.pageErrors).toEqual([]);
  });
});
