import { ApiClient, http, type RecordedPage } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';
import { allowByOrganisation } from '../support/enterprise-authorizations';
import { adminCreated } from '../support/registry-fixture';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
/** A read-only administrator (`server.admin.authorization.viewers`). */
const AUDITOR = 'auditor@example.com';
const DAY = 24 * 60 * 60 * 1000;

/**
 * In a real Chromium against a real broker serving the admin console on its admin server: an administrator registers
 * agents (the API's refusals at their fields, in words), makes, rotates and revokes client credentials (the secret
 * shown once), reads and revokes people's grants and enterprise authorizations, suspends and resumes an agent, and a
 * viewer sees all of it with every write disabled. Each page passes axe in light and dark, with screenshots.
 */
describe('admin console: agents', () => {
  let fx: AdminConsoleFixture;
  let serviceId: string;
  let setId: string;
  const opened: RecordedPage[] = [];

  async function open(path: string, principal?: string): Promise<RecordedPage> {
    const recorded = await fx.open(path, principal === undefined ? {} : { principal });
    opened.push(recorded);
    return recorded;
  }

  /** An agent registered through the admin API with the calendar permission set: its id. */
  function registered(body: Record<string, unknown>): Promise<string> {
    return adminCreated(fx.admin, '/api/agents', { permission_sets: [{ permission_set_id: setId }], ...body });
  }

  /** The status of a client_credentials token request (RFC 6749 §4.4) with this secret. */
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

  /** The person allows the agent its permission set (the consent API), optionally until a date. */
  async function allow(principal: string, agentId: string, validUntil?: Date): Promise<void> {
    const response = await new ApiClient(fx.enduserUrl, principal).post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [setId]: [serviceId] },
      ...(validUntil === undefined ? {} : { valid_until: validUntil.toISOString() }),
    });
    expect(response.status, response.text).toBe(201);
  }

  async function grantedTo(agentId: string): Promise<string[]> {
    const response = await fx.admin.get(`/api/agents/${agentId}/grants`);
    expect(response.status, response.text).toBe(200);
    return response
      .json<{ items: { principal: string }[] }>()
      .items.map((grant) => grant.principal)
      .sort();
  }

  /** The page's text, to prove a secret is no longer anywhere on it. */
  const textOf = (page: Page): Promise<string> => page.locator('body').innerText();

  beforeAll(async () => {
    fx = await startAdminConsoleFixture({
      config: { server: { admin: { authorization: { viewers: [AUDITOR] } } } },
    });
    serviceId = await adminCreated(fx.admin, '/api/services', {
      display_name: 'Calendar',
      client_id: 'calendar-client',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/authorize',
      token_endpoint: 'https://idp.example.com/token',
      scopes: [{ scope: 'calendar.read', description: 'See your calendar' }],
      protected_resources: ['https://calendar.example.com/api'],
    });
    setId = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Calendar access',
      description: 'See the events of your calendar',
      service_scopes: [{ service_id: serviceId, scopes: ['calendar.read'] }],
    });
  });

  afterEach(async () => {
    for (const recorded of opened.splice(0)) {
      expect(recorded.pageErrors, 'uncaught errors in the page').toEqual([]);
      expect(recorded.dialogs, 'alert/confirm/prompt opened').toEqual([]);
      await recorded.close();
    }
  });

  afterAll(async () => {
    await fx?.stop();
  });

  it('registers an agent: a refused redirect URI is said at its field in words, then fixed and saved', async () => {
    const { page } = await open('/agents');
    await page.getByRole('heading', { name: 'No agents yet' }).waitFor();
    await reviewAdminPage(opened[0] as RecordedPage, 'agents-empty');

    await page.getByRole('link', { name: 'New agent' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'New agent' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Expense assistant');
    await page.getByLabel('Canonical id').fill('expense-assistant');
    await page.getByRole('button', { name: 'Add redirect URI' }).click();
    // Plain http off loopback: the API refuses it (RFC 8252 §8.3 allows http only on loopback).
    await page.getByRole('textbox', { name: 'Redirect URI 1' }).fill('http://assistant.example.com/cb');
    await page.getByRole('checkbox', { name: /Calendar access/ }).check();
    await page.getByRole('combobox', { name: 'How Calendar access is required' }).selectOption('optional');
    await page.getByText('The person may leave it out.').waitFor();
    await page.getByRole('radio', { name: /^Required/ }).check();
    await page.getByRole('button', { name: 'Register agent' }).click();

    const redirect = page.getByRole('textbox', { name: 'Redirect URI 1' });
    await page.getByText('Redirect URIs must be absolute https URIs', { exact: false }).waitFor();
    expect(await redirect.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('alert').filter({ hasText: 'Nothing was saved' }).waitFor();
    // Nothing of the API's JSON is shown.
    expect(await textOf(page)).not.toContain('"error"');
    expect(await textOf(page)).not.toContain('redirect_uris');
    expect((await fx.admin.get('/api/agents')).json<unknown[]>()).toEqual([]);
    await reviewAdminPage(opened[0] as RecordedPage, 'agent-new-field-error');

    await redirect.fill('https://assistant.example.com/cb');
    await page.getByRole('button', { name: 'Register agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Expense assistant' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Expense assistant is registered' }).waitFor();
    const id = /\/agents\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
    const stored = (await fx.admin.get(`/api/agents/${id}`)).json<Record<string, unknown>>();
    expect(stored).toMatchObject({
      display_name: 'Expense assistant',
      canonical_id: 'expense-assistant',
      redirect_uris: ['https://assistant.example.com/cb'],
      dpop_bound_access_tokens: true,
      permission_sets: [{ permission_set_id: setId, requirement_type: 'optional' }],
    });
    // The form shows what was stored.
    expect(await page.getByRole('textbox', { name: 'Redirect URI 1' }).inputValue()).toBe(
      'https://assistant.example.com/cb',
    );
    expect(await page.getByRole('radio', { name: /^Required/ }).isChecked()).toBe(true);
  });

  it('explains a canonical id another agent has (409) at its field, and saves an edit', async () => {
    await registered({ display_name: 'Travel planner', canonical_id: 'travel-planner' });
    const id = await registered({ display_name: 'Travel helper' });
    const { page } = await open(`/agents/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Travel helper' }).waitFor();
    const canonical = page.getByLabel('Canonical id');
    await canonical.fill('travel-planner');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Another agent already has the canonical id “travel-planner”', { exact: false }).waitFor();
    expect(await canonical.getAttribute('aria-invalid')).toBe('true');
    await reviewAdminPage(opened[0] as RecordedPage, 'agent-edit-conflict');

    await canonical.fill('travel-helper');
    await page.getByLabel('Description').fill('Books trains and hotels for your trips.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await canonical.getAttribute('aria-invalid')).toBeNull();
    expect((await fx.admin.get(`/api/agents/${id}`)).json()).toMatchObject({
      canonical_id: 'travel-helper',
      description: 'Books trains and hotels for your trips.',
      permission_sets: [{ permission_set_id: setId, requirement_type: 'mandatory' }],
    });
  });

  it('shows a new client secret once, with copy; rotating stops the old secret at once; revoking stops the new one', async () => {
    const id = await registered({ display_name: 'Report writer' });
    const recorded = await open(`/agents/${id}`);
    const { page } = recorded;
    await recorded.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fx.adminUrl });
    const credentials = page.getByRole('region', { name: 'Client credentials' });
    await credentials.getByText('This agent has no client credentials').waitFor();
    await credentials.getByRole('button', { name: 'Create client credentials' }).click();

    const shown = credentials.getByRole('region', { name: 'New client secret' });
    await shown.getByText('shown only this once', { exact: false }).waitFor();
    const secret = (await shown.locator('code').innerText()).trim();
    expect(secret).toMatch(/^aib_cs_[A-Za-z0-9_-]{43}$/);
    await shown.getByRole('button', { name: 'Copy client secret' }).click();
    await shown.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    expect(await tokenStatus(id, secret)).toBe(200);
    await reviewAdminPage(recorded, 'agent-credentials-new-secret');

    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await credentials.getByText('Secret last rotated').waitFor();
    expect(await textOf(page)).not.toContain(secret);
    await page.reload();
    await credentials.getByText('Secret last rotated').waitFor();
    expect(await textOf(page)).not.toContain(secret);

    await credentials.getByRole('button', { name: 'Rotate secret' }).click();
    const rotate = page.getByRole('dialog', { name: "Rotate Report writer's client secret?" });
    await rotate.getByText('The current secret stops working at once.').waitFor();
    await reviewAdminPage(recorded, 'agent-credentials-rotate');
    await rotate.getByRole('button', { name: 'Rotate secret' }).click();
    await shown.getByText('The previous secret no longer works.', { exact: false }).waitFor();
    const rotated = (await shown.locator('code').innerText()).trim();
    expect(rotated).toMatch(/^aib_cs_/);
    expect(rotated).not.toBe(secret);
    expect(await tokenStatus(id, secret)).toBe(401);
    expect(await tokenStatus(id, rotated)).toBe(200);

    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await credentials.getByRole('button', { name: 'Revoke credentials' }).click();
    const revoke = page.getByRole('dialog', { name: "Revoke Report writer's client credentials?" });
    await revoke.getByRole('button', { name: 'Revoke credentials' }).click();
    await credentials.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
    await credentials.getByText('This agent has no client credentials').waitFor();
    expect(await tokenStatus(id, rotated)).toBe(401);
  });

  it("lists people's grants (who, what, until when), revokes one, then all of them in an incident", async () => {
    const id = await registered({ display_name: 'Meeting scheduler' });
    const until = new Date(fx.clock.now().getTime() + 30 * DAY);
    await allow(ALICE, id, until);
    await allow(BOB, id);
    const recorded = await open(`/agents/${id}`);
    const { page } = recorded;
    const people = page.getByRole('list', { name: 'People who allowed Meeting scheduler' });
    const alice = people.getByRole('listitem').filter({ hasText: ALICE }).first();
    await alice.getByText('Calendar', { exact: true }).waitFor();
    await alice.getByText('calendar.read', { exact: true }).waitFor();
    await alice.getByText(/^Until /).waitFor();
    await alice.getByText('Permission sets: Calendar access').waitFor();
    await people.getByRole('listitem').filter({ hasText: BOB }).first().getByText('No end date').waitFor();
    await reviewAdminPage(recorded, 'agent-grants');

    await page.getByRole('button', { name: `Revoke ${BOB}'s access` }).click();
    const one = page.getByRole('dialog', { name: `Revoke ${BOB}'s access to Meeting scheduler?` });
    await one.getByText('Its tokens for them are refused at once', { exact: false }).waitFor();
    await one.getByRole('button', { name: 'Revoke access' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Revoked ${BOB}'s access` })
      .waitFor();
    expect(await grantedTo(id)).toEqual([ALICE]);
    await page.getByRole('button', { name: `Revoke ${BOB}'s access` }).waitFor({ state: 'detached' });

    // Bob allows it again; then an incident: every grant of the agent ends.
    await allow(BOB, id);
    await page.reload();
    await people.getByRole('listitem').filter({ hasText: BOB }).first().waitFor();
    await page.getByRole('button', { name: 'Revoke all' }).click();
    const all = page.getByRole('dialog', { name: 'Revoke every grant of Meeting scheduler?' });
    await all.getByText("2 people's access to Meeting scheduler ends at once.").waitFor();
    await all.getByText(`Whose access stops: ${ALICE} and ${BOB}.`).waitFor();
    await all.getByText('tokens for them are refused from now on', { exact: false }).waitFor();
    await reviewAdminPage(recorded, 'agent-grants-revoke-all');
    await all.getByRole('button', { name: 'Revoke 2 grants' }).click();
    await page.getByRole('status').filter({ hasText: "Revoked 2 people's access to Meeting scheduler" }).waitFor();
    await page.getByText('Nobody has allowed this agent yet.').waitFor();
    expect(await grantedTo(id)).toEqual([]);
  });

  it("lists what people's identity providers allowed the agent, and revokes one", async () => {
    const id = await registered({ display_name: 'Support copilot' });
    await allowByOrganisation(fx.broker, {
      principal: ALICE,
      agentId: id,
      resourceUri: 'https://tickets.example.com/mcp',
      scopes: ['tickets.read'],
      issuedAt: fx.clock.now(),
    });
    const recorded = await open(`/agents/${id}`);
    const { page } = recorded;
    const section = page.getByRole('region', { name: 'Allowed by organisations' });
    const item = section.getByRole('listitem').filter({ hasText: ALICE });
    await item.getByText('idp.example.com', { exact: true }).waitFor();
    await item.getByText('tickets.read', { exact: true }).waitFor();
    await item
      .getByRole('button', { name: `Revoke ${ALICE}'s enterprise authorization for https://tickets.example.com/mcp` })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Revoke what idp.example.com allowed Support copilot?' });
    await dialog.getByText('stop working at once', { exact: false }).waitFor();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await section.getByText('No identity provider has allowed this agent at the moment.').waitFor();
    const live = await fx.admin.get(`/api/agents/${id}/enterprise-authorizations`);
    expect(live.json<{ items: unknown[] }>().items).toEqual([]);
  });

  it('suspends an agent (its secret refused meanwhile, badged in the list) and resumes it (the same secret works again)', async () => {
    const id = await registered({ display_name: 'Invoice bot' });
    const issued = await fx.admin.post(`/api/agents/${id}/client-credentials`);
    const secret = issued.json<{ client_secret: string }>().client_secret;
    await allow(ALICE, id);
    expect(await tokenStatus(id, secret)).toBe(200);

    const recorded = await open(`/agents/${id}`);
    const { page } = recorded;
    await page.getByRole('button', { name: 'Suspend', exact: true }).click();
    const suspend = page.getByRole('dialog', { name: 'Suspend Invoice bot?' });
    await suspend.getByText('Nothing is deleted', { exact: false }).waitFor();
    await suspend.getByLabel('Reason (optional)').fill('Investigating a leaked secret');
    await reviewAdminPage(recorded, 'agent-suspend-dialog');
    await suspend.getByRole('button', { name: 'Suspend agent' }).click();
    const notice = page.getByRole('status').filter({ hasText: 'Invoice bot is suspended since' });
    await notice.waitFor();
    await notice.getByText('Reason: Investigating a leaked secret', { exact: false }).waitFor();
    await page.getByText('Suspended', { exact: true }).first().waitFor();
    expect((await fx.admin.get(`/api/agents/${id}`)).json()).toMatchObject({
      suspension: { suspended_by: 'admin@example.com', reason: 'Investigating a leaked secret' },
    });
    expect(await tokenStatus(id, secret)).toBe(401);
    await reviewAdminPage(recorded, 'agent-suspended');

    const list = await open('/agents');
    const card = list.page.getByRole('listitem').filter({ has: list.page.getByRole('link', { name: 'Invoice bot' }) });
    await card.getByText('Suspended', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    const resume = page.getByRole('dialog', { name: 'Resume Invoice bot?' });
    await resume.getByText('Everything is restored exactly as it was').waitFor();
    await resume.getByRole('button', { name: 'Resume agent' }).click();
    await page.getByRole('button', { name: 'Suspend', exact: true }).waitFor();
    expect(await page.getByText('is suspended since', { exact: false }).count()).toBe(0);
    expect((await fx.admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension: null });
    expect(await tokenStatus(id, secret)).toBe(200);
    expect(await grantedTo(id)).toEqual([ALICE]);
  });

  it('searches the list by name, canonical id and upstream client id', async () => {
    await registered({ display_name: 'Legal reviewer', canonical_id: 'legal-review', client_id: 'upstream-legal-7' });
    const recorded = await open('/agents');
    const { page } = recorded;
    const list = page.getByRole('list', { name: 'Agents' });
    await list.getByRole('link', { name: 'Legal reviewer' }).waitFor();
    await reviewAdminPage(recorded, 'agents-list');
    const search = page.getByRole('searchbox', { name: 'Search agents' });
    for (const typed of ['legal rev', 'legal-review', 'UPSTREAM-LEGAL']) {
      await search.fill(typed);
      await page.getByText(`1 agent matches “${typed}”`).waitFor();
      expect(await list.getByRole('link').allInnerTexts()).toEqual(['Legal reviewer']);
    }
    await search.fill('no such agent');
    await page.getByText('No agent has that name, canonical id or client id.').waitFor();
    expect(page.url()).toContain('q=no+such+agent');
  });

  it('shows a viewer everything, with every write disabled and why', async () => {
    const id = await registered({ display_name: 'Audit subject', redirect_uris: ['https://audit.example.com/cb'] });
    await fx.admin.post(`/api/agents/${id}/client-credentials`);
    await allow(ALICE, id);
    const recorded = await open(`/agents/${id}`, AUDITOR);
    const { page } = recorded;
    await page.getByText('Read-only: your role is viewer', { exact: false }).first().waitFor();
    await page
      .getByRole('list', { name: 'People who allowed Audit subject' })
      .getByText(ALICE, { exact: true })
      .waitFor();
    expect(await page.getByRole('textbox', { name: 'Redirect URI 1' }).inputValue()).toBe(
      'https://audit.example.com/cb',
    );
    for (const name of [
      'Suspend',
      'Rotate secret',
      'Revoke credentials',
      'Revoke all',
      'Save changes',
      'Delete agent',
    ]) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), name).toBe(true);
      expect(await button.getAttribute('title'), name).toBe('Read-only: your role is viewer');
    }
    expect(await page.getByRole('button', { name: `Revoke ${ALICE}'s access` }).isDisabled()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Redirect URI 1' }).getAttribute('readonly')).not.toBeNull();
    await reviewAdminPage(recorded, 'agent-viewer');

    const list = await open('/agents', AUDITOR);
    const add = list.page.getByRole('button', { name: 'New agent' });
    expect(await add.isDisabled()).toBe(true);
    expect(await list.page.getByRole('link', { name: 'New agent' }).count()).toBe(0);
  });
});
