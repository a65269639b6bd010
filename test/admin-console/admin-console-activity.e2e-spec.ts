import type { RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  reviewAdminPage,
  startAdminConsoleFixture,
  type AdminConsoleFixture,
} from '../support/admin-console-fixture';
import { grantedAgent } from '../support/granted-agent';

/** The Activity page: the ledger across people, filtered by person, agent, kind and time, with the export. */

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

interface LedgerEvent {
  id: string;
  type: string;
  principal: string | null;
  agent_id: string | null;
}

describe('the admin console: activity', () => {
  let fixture: AdminConsoleFixture;
  let recorded: RecordedPage;
  let calendarId: string;

  const ledger = async (query: string): Promise<LedgerEvent[]> =>
    (await fixture.admin.get(`/api/events?limit=100&${query}`)).json<{ items: LedgerEvent[] }>().items;
  /** The ids of the events the page shows (each event's "Details" holds none: the list is compared by count and words). */
  const shownCount = () => recorded.page.locator('.event-list > li').count();

  beforeAll(async () => {
    fixture = await startAdminConsoleFixture();
    const urls = { admin: fixture.adminUrl, enduser: fixture.enduserUrl };
    await grantedAgent(urls, [ALICE, BOB], 'Mail Agent');
    calendarId = (await grantedAgent(urls, [BOB], 'Calendar Agent')).id;
  });

  afterAll(async () => {
    await recorded?.close();
    await fixture.stop();
  });

  it('shows every event, newest first, in words: what, by whom, for which person and agent', async () => {
    recorded = await fixture.open('/activity');
    const { page } = recorded;
    await page.locator('.event-list').waitFor();
    const all = await ledger('');
    expect(await shownCount()).toBe(all.length);
    const text = await page.locator('.event-list').textContent();
    expect(text).toContain('Access granted');
    expect(text).toContain('Agent registered');
    expect(text).toContain(`By${ADMIN}`);
    expect(text).toContain(`Person${ALICE}`);
    expect(text).toContain('AgentCalendar Agent');
    expect(text).not.toContain('grant.created');
    await reviewAdminPage(recorded, 'activity-all');
  });

  it('filters by person: the address carries the filter, and only that person’s events are listed', async () => {
    const { page } = recorded;
    await page.getByLabel('Person').fill(ALICE);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/principal=alice%40example\.com/);
    const expected = await ledger(`principal=${encodeURIComponent(ALICE)}`);
    expect(expected.length).toBeGreaterThan(0);
    await expect.poll(shownCount).toBe(expected.length);
    const people = await page.locator('.event-list dt:text-is("Person") + dd').allTextContents();
    expect(new Set(people)).toEqual(new Set([ALICE]));
  });

  it('filters by agent and kind together', async () => {
    const { page } = recorded;
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Agent').selectOption({ label: 'Calendar Agent' });
    await page.getByLabel('Kind').selectOption({ label: 'Access granted' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/agent_id=/);
    const expected = await ledger(`agent_id=${calendarId}&type=grant.created`);
    expect(expected.map((event) => event.principal)).toEqual([BOB]);
    await expect.poll(shownCount).toBe(1);
    expect(await page.locator('.event-list').textContent()).toContain(`Person${BOB}`);
    await reviewAdminPage(recorded, 'activity-filtered');
  });

  it('exports exactly the filtered events as newline-delimited JSON', async () => {
    const link = recorded.page.getByRole('link', { name: 'Export these events' });
    const href = (await link.getAttribute('href')) ?? '';
    const query = new URL(href, fixture.adminUrl).searchParams;
    expect(new URL(href, fixture.adminUrl).pathname).toBe('/api/events/export');
    expect([query.get('agent_id'), query.get('type'), query.get('principal')]).toEqual([
      calendarId,
      'grant.created',
      null,
    ]);
    expect(await link.getAttribute('download')).not.toBeNull();
    // What the link fetches, with the proxy's header (headless Chromium cancels a download whose request a test routes).
    const answer = await recorded.page.request.get(new URL(href, fixture.adminUrl).href, {
      headers: { 'x-remote-user': ADMIN },
    });
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-disposition']).toMatch(/^attachment; filename="events-.*\.ndjson"$/);
    const exported = (await answer.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LedgerEvent);
    expect(exported.map((event) => [event.type, event.agent_id, event.principal])).toEqual([
      ['grant.created', calendarId, BOB],
    ]);
  });

  it('says so when nothing matches a time range', async () => {
    const { page } = recorded;
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL((url) => url.search === '');
    const later = new Date(fixture.clock.now().getTime() + 2 * 3_600_000);
    const local = new Date(later.getTime() - later.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('From').fill(local);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('heading', { name: 'No events match these filters' }).waitFor();
    await reviewAdminPage(recorded, 'activity-empty');
  });

  it('shows a refused filter at its field in words, never the JSON', async () => {
    const { page } = recorded;
    await page.goto(`${fixture.adminUrl}/activity?from=2026-01-02T00:00:00.000Z&to=2026-01-01T00:00:00.000Z`);
    await page.getByRole('alert').filter({ hasText: 'The filters were not applied' }).waitFor();
    const until = page.getByLabel('Until');
    await expect(until.getAttribute('aria-invalid')).resolves.toBe('true');
    const describedBy = (await until.getAttribute('aria-describedby')) ?? '';
    expect(await page.locator(`#${describedBy}`).textContent()).toBe('Must be after From.');
    const words = (await page.locator('form.filters').textContent()) ?? '';
    expect(words).not.toContain('{');
    expect(words).not.toContain('"error"');
    await reviewAdminPage(recorded, 'activity-refused-filter');
    expect(recorded.pageErrors).toEqual([]);
  });
});
