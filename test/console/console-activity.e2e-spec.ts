import { createHash, randomUUID } from 'node:crypto';
import { type AnyBrokerEvent, type EventToAppend } from '@broker/events';
import { EventRepository, GrantRepository, RefreshTokenRepository } from '@broker/persistence';
import { ApiClient, type RecordedPage } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BOB, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

/**
 * In a real Chromium against a real broker serving its console: the Activity
 * page (`/activity`) shows the signed-in person's own events only, in words, newest first;
 * its filters narrow the list; "Load more" appends the next page; the agents page shows when
 * each agent last used each service. Events are written straight to the ledger
 * (`EventRepository.append`), as the recorders would, at times relative to now.
 */
describe('console: activity in a browser', () => {
  let fx: ConsoleFixture;
  let ledger: EventRepository;
  let mail: string;
  let calendar: string;
  let mailAgent: string;
  let calendarAgent: string;
  let alice: ApiClient;
  const now = Date.now();
  const ago = (minutes: number): Date => new Date(now - minutes * 60_000);
  const DAY = 24 * 60;
  /** Alice's older routine exchanges, 20-40 days ago: enough for a second page. */
  const ROUTINE = 30;

  /** A service the admin registers (never contacted: no one connects it here). */
  async function service(name: string, host: string): Promise<string> {
    const created = await fx.admin.post('/api/services', {
      display_name: name,
      client_id: `${host}-client`,
      client_secret: 'not-used-here',
      issuer_uri: `https://${host}`,
      authorization_endpoint: `https://${host}/authorize`,
      token_endpoint: `https://${host}/token`,
      scopes: [{ scope: 'read', description: `Read your ${name.toLowerCase()}` }],
      protected_resources: [`https://${host}/api`],
    });
    expect(created.status, created.text).toBe(201);
    return created.json<{ id: string }>().id;
  }

  function event(at: Date, e: AnyBrokerEvent): EventToAppend {
    return { id: randomUUID(), occurredAt: at, event: e };
  }

  const trace = (): string => randomUUID().replaceAll('-', '');

  function exchanged(
    principal: string,
    at: Date,
    agent: string,
    svc: string,
    resource: string,
    oauthError: string | null = null,
  ): EventToAppend {
    return event(at, {
      type: 'token.exchanged',
      actor: { type: 'gateway', id: 'mcp-gateway' },
      principal,
      agentId: agent,
      serviceId: svc,
      outcome: oauthError === null ? 'success' : 'failure',
      traceId: trace(),
      details: { resource, oauth_error: oauthError },
    });
  }

  function approval(
    principal: string,
    at: Date,
    kind: 'approval.requested',
    tool: string,
    args: Record<string, unknown>,
  ): EventToAppend {
    const argumentsSha256 = createHash('sha256').update(JSON.stringify(args)).digest('hex');
    return event(at, {
      type: kind,
      actor: { type: 'gateway', id: 'mcp-gateway' },
      principal,
      agentId: mailAgent,
      serviceId: null,
      outcome: 'success',
      traceId: trace(),
      details: {
        approval_id: randomUUID(),
        tool_name: tool,
        risk_level: 'high',
        argument_names: Object.keys(args),
        arguments_sha256: argumentsSha256,
      },
    });
  }

  beforeAll(async () => {
    fx = await startConsoleFixture();
    ledger = fx.broker.broker.server('enduser').app.get(EventRepository);
    alice = new ApiClient(fx.base, ALICE);
    mail = await service('Mail', 'mail.example.com');
    calendar = await service('Calendar', 'calendar.example.com');
    const mailSet = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: mail, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
    const calendarSet = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Calendar',
        service_scopes: [{ service_id: calendar, scopes: ['read'] }],
      })
    ).json<{ id: string }>().id;
    mailAgent = (
      await fx.admin.post('/api/agents', {
        display_name: 'Mail Agent',
        permission_sets: [{ permission_set_id: mailSet }, { permission_set_id: calendarSet }],
      })
    ).json<{ id: string }>().id;
    calendarAgent = (
      await fx.admin.post('/api/agents', {
        display_name: 'Calendar Agent',
        permission_sets: [{ permission_set_id: calendarSet }],
      })
    ).json<{ id: string }>().id;
    // In the order they happened, as the recorders write them (the ledger lists newest written first).
    const events = [
      ...Array.from({ length: ROUTINE }, (_, i) =>
        exchanged(ALICE, ago(20 * DAY + i * 960), mailAgent, mail, 'https://mail.example.com/api'),
      ),
      event(ago(10 * DAY), {
        type: 'session.refreshed',
        actor: { type: 'broker', id: null },
        principal: ALICE,
        agentId: null,
        serviceId: mail,
        outcome: 'success',
        traceId: null,
        details: { trigger: 'proactive' },
      }),
      approval(ALICE, ago(60), 'approval.requested', 'send_email', {
        to: 'team@example.com',
        subject: 'Weekly report',
      }),
      event(ago(50), {
        type: 'approval.approved',
        actor: { type: 'principal', id: ALICE },
        principal: ALICE,
        agentId: mailAgent,
        serviceId: null,
        outcome: 'success',
        traceId: trace(),
        details: {
          approval_id: randomUUID(),
          tool_name: 'send_email',
          risk_level: 'high',
          argument_names: ['subject', 'to'],
          arguments_sha256: 'a'.repeat(64),
          persistence: 'session',
        },
      }),
      exchanged(ALICE, ago(120), calendarAgent, calendar, 'https://calendar.example.com/api', 'invalid_grant'),
      exchanged(ALICE, ago(5), mailAgent, mail, 'https://mail.example.com/api'),
      // Bob's, interleaved: never on Alice's page.
      exchanged(BOB, ago(1), mailAgent, mail, 'https://bob-only.example.com/api'),
      approval(BOB, ago(2), 'approval.requested', 'bobs_private_tool', { folder: 'x' }),
    ];
    await ledger.append(events.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime()));
    // Then the grants (their own events are the newest).
    for (const [principal, agent, sets] of [
      [ALICE, mailAgent, { [mailSet]: [mail], [calendarSet]: [calendar] }],
      [ALICE, calendarAgent, { [calendarSet]: [calendar] }],
      [BOB, mailAgent, { [mailSet]: [mail] }],
    ] as const) {
      const grant = await new ApiClient(fx.base, principal).post(`/api/consent/agents/${agent}/grants`, {
        granted_permission_sets: sets,
      });
      expect(grant.status, grant.text).toBe(201);
    }
  });

  afterAll(async () => {
    await fx?.stop();
  });

  const rows = (page: Page) => page.locator('.activity-days ol > li');
  const rowTexts = (page: Page): Promise<string[]> => rows(page).allInnerTexts();

  /** Every event of Alice's activity for `query`, through the API, following next_cursor. */
  async function apiCount(query: string): Promise<number> {
    let count = 0;
    let cursor: string | null = null;
    do {
      const response = await alice.get(`/api/activity?limit=100&${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(response.status, response.text).toBe(200);
      const page = response.json<{ data: unknown[]; next_cursor: string | null }>();
      count += page.data.length;
      cursor = page.next_cursor;
    } while (cursor !== null);
    return count;
  }

  it("shows the signed-in person's own events, newest first, in words, and Load more appends the next page", async () => {
    const recorded: RecordedPage = await fx.open('/activity', ALICE);
    const { page } = recorded;
    await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor();
    await rows(page).first().waitFor();
    // Mail Agent's latest token exchange, 5 minutes ago, with names, the resource and a relative time.
    const first = rows(page).filter({ hasText: 'Token used' }).first();
    const text = await first.innerText();
    expect(text).toContain('Succeeded');
    expect(text).toContain('Agent: Mail Agent');
    expect(text).toContain('Service: Mail');
    expect(text).toContain('https://mail.example.com/api');
    // Relative, and the date itself (the test may run a minute after the events were written).
    expect(text).toMatch(/\b\d+ minutes ago\b/);
    expect(text).not.toContain(mailAgent);
    expect(await first.locator('time').getAttribute('datetime')).toBe(ago(5).toISOString());
    const all = (await rowTexts(page)).join('\n');
    // Bob's events are not there; nor is any raw JSON.
    expect(all).not.toContain('bob-only');
    expect(all).not.toContain('bobs_private_tool');
    expect(all).not.toContain('{');
    // The failed exchange: its OAuth error; the approval: tool, risk and argument names (never values).
    expect(all).toMatch(/Token used\s*Failed\s*invalid_grant/);
    expect(all).toContain('Approval requested');
    expect(all).toContain('send_email');
    expect(all).toContain('to, subject');
    expect(all).not.toContain('team@example.com');
    expect(all).toContain('Approval given');
    expect(all).toContain('for the agent session');
    expect(all).toContain('Connection refreshed');
    expect(all).toContain('ahead of expiry');
    expect(await rows(page).count()).toBe(25);
    await reviewPage(recorded, 'activity');

    // Load more appends the following pages until the end, each event once.
    const total = await apiCount('');
    expect(total).toBeGreaterThan(25);
    // The relative time ("5 minutes ago") may tick on meanwhile: rows are compared without it.
    const withoutRelative = (texts: string[]): string[] => texts.map((text) => text.replace(/^[^\n·]* · /gm, ''));
    const before = withoutRelative(await rowTexts(page));
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows(page).count()).toBeGreaterThan(25);
    // The first page stays as it was, the next one follows it.
    expect(withoutRelative(await rowTexts(page)).slice(0, 25)).toEqual(before);
    while ((await page.getByRole('button', { name: 'Load more' }).count()) > 0) {
      const count = await rows(page).count();
      await page.getByRole('button', { name: 'Load more' }).click();
      await expect.poll(() => rows(page).count()).toBeGreaterThan(count);
    }
    expect(await rows(page).count()).toBe(total);
    // Newest first, over every page.
    const times = await Promise.all(
      (await rows(page).locator('time').all()).map(async (time) =>
        Date.parse((await time.getAttribute('datetime')) ?? ''),
      ),
    );
    expect(times).toHaveLength(total);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    await page.getByText(`That is all: ${total} events.`).waitFor();
    expect(recorded.unexpectedErrors()).toEqual([]);
    expect(recorded.pageErrors).toEqual([]);

    // Bob sees his own, not Alice's.
    const bob = await fx.open('/activity', BOB);
    await bob.page.getByText('https://bob-only.example.com/api').waitFor();
    const bobs = (await rowTexts(bob.page)).join('\n');
    expect(bobs).toContain('bobs_private_tool');
    expect(bobs).not.toContain('send_email');
    expect(bobs).not.toContain('Calendar Agent');
  });

  it('narrows the list by agent, service, kind and time range', async () => {
    const recorded = await fx.open('/activity', ALICE);
    const { page } = recorded;
    await rows(page).first().waitFor();
    // The filters go through the page address, so the list may change a moment after the control: wait for rows that fit.
    const settle = async (expected: number, fits: (row: string) => boolean = () => true): Promise<string[]> => {
      await expect
        .poll(
          async () =>
            (await rows(page).count()) === expected &&
            (await page.locator('[aria-busy="true"]').count()) === 0 &&
            (await rowTexts(page)).every(fits),
        )
        .toBe(true);
      return rowTexts(page);
    };

    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Calendar Agent' });
    const calendarRows = await settle(await apiCount(`agent_id=${calendarAgent}`), (row) =>
      row.includes('Agent: Calendar Agent'),
    );
    expect(calendarRows.length).toBeGreaterThan(0);
    expect(calendarRows.every((row) => row.includes('Agent: Calendar Agent'))).toBe(true);
    expect(calendarRows.join('\n')).toContain('invalid_grant');
    await reviewPage(recorded, 'activity-filtered');

    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'All agents' });
    await page.getByLabel('Service', { exact: true }).selectOption({ label: 'Calendar' });
    const byService = await settle(await apiCount(`service_id=${calendar}`), (row) =>
      row.includes('Service: Calendar'),
    );
    expect(byService.every((row) => row.includes('Service: Calendar'))).toBe(true);

    await page.getByLabel('Service', { exact: true }).selectOption({ label: 'All services' });
    await page.getByLabel('What happened').selectOption({ label: 'Approval requested' });
    const approvals = await settle(1, (row) => row.includes('Approval requested'));
    expect(approvals[0]).toContain('send_email');

    // The last 7 days: none of the routine exchanges of 20-40 days ago.
    await page.getByLabel('What happened').selectOption({ label: 'Token used' });
    await page.getByLabel('When').selectOption({ label: 'Last 7 days' });
    const recent = await settle(
      await apiCount(`type=token.exchanged&from=${encodeURIComponent(ago(7 * DAY).toISOString())}`),
      (row) => row.includes('Token used'),
    );
    expect(recent).toHaveLength(2);

    // Dates: the days of the routine exchanges only (the person's own calendar days).
    await page.getByLabel('When').selectOption({ label: 'Between dates…' });
    const day = (date: Date): string =>
      `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
    await page.getByLabel('From', { exact: true }).fill(day(ago(45 * DAY)));
    await page.getByLabel('To', { exact: true }).fill(day(ago(15 * DAY)));
    // A first page of 25, then the rest of the range.
    await settle(25, (row) => row.includes('Token used') && row.includes('Agent: Mail Agent'));
    await page.getByRole('button', { name: 'Load more' }).click();
    expect(
      (await settle(ROUTINE)).every((row) => row.includes('Token used') && row.includes('Agent: Mail Agent')),
    ).toBe(true);
    // A last day before the first is explained, not sent.
    await page.getByLabel('To', { exact: true }).fill(day(ago(50 * DAY)));
    await page.getByRole('alert').filter({ hasText: 'The last day comes before the first' }).waitFor();
    await expectNoRows(page);

    // Nothing matches: the empty state offers to clear the filters.
    await page.getByLabel('When').selectOption({ label: 'Last 24 hours' });
    await page.getByLabel('What happened').selectOption({ label: 'Access expired' });
    await page.getByText('No activity matches these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await settle(25);
    expect(recorded.unexpectedErrors()).toEqual([]);
  });

  async function expectNoRows(page: Page): Promise<void> {
    await expect.poll(() => rows(page).count()).toBe(0);
  }

  it('explains what will appear to a person with no activity yet', async () => {
    const recorded = await fx.open('/activity', 'carol@example.com');
    await recorded.page.getByText('Nothing has happened yet.').waitFor();
    await recorded.page.getByText(/When an agent uses a service for you/).waitFor();
    await reviewPage(recorded, 'activity-empty');
  });

  it('shows on the agents page when each agent last used each service', async () => {
    const recorded = await fx.open('/agents', ALICE);
    const { page } = recorded;
    const mailCard = page.locator('li.card', { hasText: 'Mail Agent' });
    const calendarCard = page.locator('li.card', { hasText: 'Calendar Agent' });
    const usage = (card: typeof mailCard) => card.locator('ul.usage > li');
    await expect
      .poll(() => usage(mailCard).allInnerTexts())
      .toEqual([
        expect.stringMatching(/^Calendar\s*Not used yet$/),
        expect.stringMatching(/^Mail\s*Last used \d+ minutes ago$/),
      ]);
    expect(await mailCard.locator('ul.usage time').getAttribute('datetime')).toBe(ago(5).toISOString());
    // Calendar Agent's only exchange failed: not a use.
    await expect
      .poll(() => usage(calendarCard).allInnerTexts())
      .toEqual([expect.stringMatching(/^Calendar\s*Not used yet$/)]);
    await reviewPage(recorded, 'agents-last-used');
    // Bob's agents page: his own use only (Mail Agent used for him a minute ago).
    const bob = await fx.open('/agents', BOB);
    await expect
      .poll(() => bob.page.locator('li.card', { hasText: 'Mail Agent' }).locator('ul.usage > li').allInnerTexts())
      .toEqual([expect.stringMatching(/^Mail\s*Last used (1 minute|\d+ minutes) ago$/)]);
  });
  it("says on the agents page how many of an agent's sign-ins are live, and revoking there ends them", async () => {
    const app = fx.broker.broker.server('enduser').app;
    const grantId = await app.get(GrantRepository).activeId(ALICE, mailAgent, new Date());
    const tokens = app.get(RefreshTokenRepository);
    // Two families (two sign-ins of the agent as Alice), as the authorization code grant starts them; a third already revoked.
    const values: string[] = [];
    for (const revoked of [false, false, true]) {
      const familyId = randomUUID();
      const value = randomUUID();
      values.push(value);
      await tokens.issue({
        id: randomUUID(),
        familyId,
        tokenSha256: createHash('sha256').update(value).digest(),
        agentId: mailAgent,
        principal: ALICE,
        grantId: grantId as string,
        resources: [],
        scopes: ['offline_access'],
        credentialSha256: null,
        clientIdUrl: null,
        dpopJkt: null,
        issuedAt: new Date(),
        idleExpiresAt: new Date(now + 86_400_000),
        familyExpiresAt: new Date(now + 30 * 86_400_000),
      });
      if (revoked) await tokens.revokeFamily(familyId, new Date());
    }
    const recorded = await fx.open('/agents', ALICE);
    const { page } = recorded;
    const mailCard = page.locator('li.card', { hasText: 'Mail Agent' });
    await expect.poll(() => mailCard.locator('.meta').innerText()).toContain('2 active sign-ins');
    await expect
      .poll(() => page.locator('li.card', { hasText: 'Calendar Agent' }).locator('.meta').innerText())
      .toContain('No active sign-in');
    await reviewPage(recorded, 'agents-live-sign-ins');
    // The agent's own page says it too.
    const agentPage = await fx.open(`/agents/${mailAgent}`, ALICE);
    await expect.poll(() => agentPage.page.locator('.consent-header').innerText()).toContain('2 active sign-ins');
    await reviewPage(agentPage, 'agent-page-live-sign-ins');
    await mailCard.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.locator('dialog[open]').innerText()).toContain('Its 2 active sign-ins end.');
    await reviewPage(recorded, 'agents-revoke-ends-sign-ins');

    // Alice revokes the agent's access in the console: its refresh tokens stop working at once.
    const refresh = (value: string) =>
      fetch(`${fx.base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: value, client_id: mailAgent }),
      });
    const renewed = await refresh(values[0] as string);
    expect(renewed.status).toBe(200);
    const successor = ((await renewed.json()) as { refresh_token: string }).refresh_token;
    await page.locator('dialog[open]').getByRole('button', { name: 'Revoke access' }).click();
    await expect.poll(() => page.locator('li.card', { hasText: 'Mail Agent' }).count()).toBe(0);
    // What stopped, said in a status message; focus on the page's heading, not lost with the removed card.
    await page
      .getByRole('status')
      .filter({ hasText: 'Revoked access for Mail Agent' })
      .filter({ hasText: 'Its 2 active sign-ins ended.' })
      .waitFor();
    expect(await page.locator('h1:focus').allInnerTexts()).toEqual(['Agents']);
    const refused = await refresh(successor);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
  });
  it('badges say what came of each event, events are grouped by day, filters live in the address, and a declined consent is listed', async () => {
    // A revocation, a denial and a declined consent, as the recorders write them, newest of all.
    const revoked = event(new Date(Date.now() - 1_000), {
      type: 'grant.revoked',
      actor: { type: 'principal', id: ALICE },
      principal: ALICE,
      agentId: calendarAgent,
      serviceId: null,
      outcome: 'success',
      traceId: trace(),
      details: {},
    });
    const denial = event(new Date(), {
      type: 'approval.denied',
      actor: { type: 'principal', id: ALICE },
      principal: ALICE,
      agentId: mailAgent,
      serviceId: null,
      outcome: 'success',
      traceId: trace(),
      details: {
        approval_id: randomUUID(),
        tool_name: 'delete_folder',
        risk_level: 'critical',
        argument_names: ['path'],
        arguments_sha256: 'b'.repeat(64),
      },
    });
    const declined = event(new Date(Date.now() + 1_000), {
      type: 'consent.denied',
      actor: { type: 'principal', id: ALICE },
      principal: ALICE,
      agentId: calendarAgent,
      serviceId: null,
      outcome: 'success',
      traceId: trace(),
      details: { resources: [] },
    });
    await ledger.append([revoked, denial, declined]);
    const recorded = await fx.open('/activity', ALICE);
    const { page } = recorded;
    await rows(page).first().waitFor();
    const badge = (title: string) =>
      rows(page)
        .filter({ has: page.getByRole('heading', { name: title, exact: true }) })
        .first()
        .locator('.badge');
    expect(await badge('Approval denied').innerText()).toBe('Denied');
    expect(await badge('Access declined').innerText()).toBe('Declined');
    expect(await badge('Access revoked').innerText()).toBe('Revoked');
    expect(await rows(page).filter({ hasText: 'Access declined' }).first().innerText()).toContain(
      'Agent: Calendar Agent',
    );

    // A heading per day: today first, then earlier days, each holding only its own day's events.
    const days = page.locator('.activity-day');
    expect(await days.first().getByRole('heading', { level: 2 }).innerText()).toBe('Today');
    const localDay = (at: Date): string =>
      `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, '0')}-${String(at.getDate()).padStart(2, '0')}`;
    const sections: { day: string; times: string[] }[] = [];
    for (const section of await days.all()) {
      const times = await Promise.all(
        (await section.locator('li time').all()).map(async (time) =>
          localDay(new Date((await time.getAttribute('datetime')) ?? '')),
        ),
      );
      sections.push({ day: (await section.locator('h2 time').getAttribute('datetime')) ?? '', times });
    }
    expect(sections.length).toBeGreaterThan(1);
    for (const section of sections) expect(new Set(section.times)).toEqual(new Set([section.day]));
    expect(sections.map((section) => section.day)).toEqual(
      [...new Set(sections.map((section) => section.day))].sort().reverse(),
    );
    await reviewPage(recorded, 'activity-by-day');

    // Filters in the address: a reload keeps them, Back undoes the last one.
    await page.getByLabel('What happened').selectOption({ label: 'Access declined' });
    await page.waitForURL((url) => url.searchParams.get('kind') === 'consent.denied');
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Calendar Agent' });
    await page.waitForURL((url) => url.searchParams.get('agent') === calendarAgent);
    await page.reload();
    await rows(page).first().waitFor();
    expect(await page.getByLabel('What happened').inputValue()).toBe('consent.denied');
    expect(await page.getByLabel('Agent', { exact: true }).inputValue()).toBe(calendarAgent);
    expect(await rowTexts(page)).toEqual([expect.stringContaining('Access declined')]);
    await page.goBack();
    await page.waitForURL((url) => !url.searchParams.has('agent') && url.searchParams.get('kind') === 'consent.denied');
    expect(await page.getByLabel('Agent', { exact: true }).inputValue()).toBe('');

    // A shared address with dates opens with them; "To" sits beside "From", on a wide screen and on a phone.
    const day = (date: Date): string =>
      `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
    const shared = `/activity?range=custom&from=${day(ago(45 * DAY))}&to=${day(ago(15 * DAY))}`;
    for (const viewport of [undefined, { width: 390, height: 844 }]) {
      const opened = await fx.open(shared, ALICE, viewport === undefined ? {} : { viewport });
      const from = opened.page.getByLabel('From', { exact: true });
      const to = opened.page.getByLabel('To', { exact: true });
      await from.waitFor();
      expect(await from.inputValue()).toBe(day(ago(45 * DAY)));
      expect(await to.inputValue()).toBe(day(ago(15 * DAY)));
      const [fromBox, toBox] = await Promise.all([from.boundingBox(), to.boundingBox()]);
      expect(Math.abs((fromBox?.y ?? 0) - (toBox?.y ?? -100)), 'From and To on one line').toBeLessThan(2);
      expect(toBox?.x ?? 0).toBeGreaterThan(fromBox?.x ?? 0);
      if (viewport === undefined) {
        await rows(opened.page).first().waitFor();
        await reviewPage(opened, 'activity-dates');
      }
    }
    expect(recorded.pageErrors).toEqual([]);
  });
});
