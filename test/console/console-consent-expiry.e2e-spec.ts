import { http, type RecordedPage } from '@broker/testing';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCreated,
  ALICE,
  PLACEHOLDER_MAIL,
  placeholderService,
  reviewPage,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-fixture';

const REDIRECT = 'https://agent.example.com/cb';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const TICKETS_URI = 'https://tickets.example.com/mcp';
const MINUTE = 60_000;

/**
 * The consent page's dead ends, in a real Chromium against a real broker: a page left open past
 * the request's expiry drops its form, says so at the top and returns to the application (which
 * hears `access_denied`); an answer the broker refuses as expired says the same; a consent address
 * opened where its request is not kept says the request is no longer here and offers nothing to
 * allow; step-up consent marks what the request asks for, in words.
 */
describe('console: expired and lost consent requests, and what a request asks for', () => {
  let fx: ConsoleFixture;
  let agentId: string;
  let researchId: string;
  let mailSet: string;
  let mail: string;
  const opened: RecordedPage[] = [];

  const created = (path: string, body: Record<string, unknown>): Promise<string> => adminCreated(fx.admin, path, body);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    mail = await placeholderService(fx.admin, PLACEHOLDER_MAIL);
    mailSet = await created('/api/permission-sets', {
      name: 'Read mail',
      service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
    });
    agentId = await created('/api/agents', {
      display_name: 'Inbox Helper',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: mailSet }],
    });
    const tickets = await created('/api/resources', {
      display_name: 'Tickets',
      description: 'The help desk.',
      resource_uri: TICKETS_URI,
      scopes: [
        { scope: 'tickets.read', description: 'Read your tickets' },
        { scope: 'tickets.write', description: 'Answer your tickets' },
      ],
    });
    const helpDesk = await created('/api/permission-sets', {
      name: 'Help desk',
      resource_scopes: [{ resource_id: tickets, scopes: ['tickets.read', 'tickets.write'] }],
    });
    researchId = await created('/api/agents', {
      display_name: 'Research Assistant',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: mailSet }, { permission_set_id: helpDesk, requirement_type: 'optional' }],
    });
  });

  afterAll(async () => {
    for (const page of opened) await page.close().catch(() => undefined);
    await fx?.stop();
  });

  /** The consent address `/oauth2/authorize` sends the person to (path and query on the console). */
  async function consentLink(agent = agentId, extra: Record<string, string> = {}, state = 'st'): Promise<string> {
    const url = new URL(`${fx.base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: agent,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      ...extra,
    }))
      url.searchParams.set(k, v);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(response.status, response.text).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(location.pathname).toBe(`/agents/${agent}`);
    return `${location.pathname}${location.search}`;
  }

  async function open(path: string): Promise<RecordedPage> {
    const page = await fx.open(path, ALICE);
    opened.push(page);
    return page;
  }

  /** The agent's redirect_uri is on another host: the browser's request to it is answered here and recorded. */
  async function interceptRedirect(page: Page): Promise<{ landed: Promise<Request> }> {
    await page
      .context()
      .route(`${REDIRECT}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/plain', body: 'agent callback' }),
      );
    const landed = page.waitForRequest((request) => request.url().startsWith(REDIRECT), { timeout: 15_000 });
    landed.catch(() => undefined); // awaited by the test
    return { landed };
  }

  async function grants(agent: string): Promise<{ granted_permission_sets: Record<string, string[]> }[]> {
    const response = await http(`${fx.base}/api/consent/agents/${agent}/grants`, {
      headers: { 'x-remote-user': ALICE },
    });
    expect(response.status, response.text).toBe(200);
    return response.json<{ data: { granted_permission_sets: Record<string, string[]> }[] }>().data;
  }

  async function expectNothingToAnswer(p: Page): Promise<void> {
    expect(await p.getByRole('button', { name: /^allow/i }).count()).toBe(0);
    expect(await p.getByRole('button', { name: /^deny/i }).count()).toBe(0);
    expect(await p.getByRole('checkbox').count()).toBe(0);
  }

  /** The element that has focus, by its text. */
  const focused = (p: Page): Promise<string | undefined> =>
    p.evaluate(() => {
      // The page's globals, typed as the little read here (the tests have no DOM types).
      const { document } = globalThis as unknown as {
        document: { activeElement: { textContent: string | null } | null };
      };
      return document.activeElement?.textContent?.trim() ?? undefined;
    });

  it('a page left open past its expiry: the form goes, the top says so with focus on it, and Return to Inbox Helper tells the application', async () => {
    const link = await consentLink(agentId, {}, 'st-left-open');
    const page = await fx.blank(ALICE);
    opened.push(page);
    const p = page.page;
    // The page's own clock, moved on below exactly as far as the broker's.
    await p.clock.install();
    await p.goto(`${fx.base}${link}`);
    await p.getByRole('button', { name: /^allow/i }).waitFor();
    expect(await p.getByRole('heading', { name: 'This request has expired' }).count()).toBe(0);

    fx.clock.advance(11 * MINUTE);
    await p.clock.fastForward(11 * MINUTE);
    const heading = p.getByRole('heading', { level: 1, name: 'This request has expired' });
    await heading.waitFor();
    await expect.poll(() => focused(p)).toBe('This request has expired');
    await p.getByText('Inbox Helper asked to act for you, and the request ended before you answered.').waitFor();
    await expectNothingToAnswer(p);
    await p.getByText('agent.example.com', { exact: true }).waitFor();
    // The waiting tab forgets it: no "waiting for your answer" elsewhere.
    const kept = await p.evaluate(() =>
      Object.keys((globalThis as unknown as { sessionStorage: Record<string, string> }).sessionStorage),
    );
    expect(kept.filter((key) => key.includes('consent-request'))).toEqual([]);
    await reviewPage(page, 'consent-expired-while-open');

    const { landed } = await interceptRedirect(p);
    await p.getByRole('button', { name: 'Return to Inbox Helper' }).click();
    const back = new URL((await landed).url());
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-left-open');
    expect(back.searchParams.get('code')).toBeNull();
    expect(page.pageErrors).toEqual([]);
  });

  it('Deny after the broker ended the request (before the page knew): the page says it expired instead of nothing', async () => {
    const page = await open(await consentLink());
    const p = page.page;
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    // Only the broker's clock moves: its answer is the first to say so.
    fx.clock.advance(11 * MINUTE);
    await p.getByRole('button', { name: /^deny/i }).click();
    await p.getByRole('heading', { level: 1, name: 'This request has expired' }).waitFor();
    await expect.poll(() => focused(p)).toBe('This request has expired');
    await expectNothingToAnswer(p);
    await p.getByRole('button', { name: 'Return to Inbox Helper' }).waitFor();
  });

  it('Allow after the broker ended the request: nothing is granted, and the page says it expired', async () => {
    const before = await grants(agentId);
    const page = await open(await consentLink());
    const p = page.page;
    await p.getByRole('button', { name: /^allow/i }).waitFor();
    fx.clock.advance(11 * MINUTE);
    await p.getByRole('button', { name: /^allow/i }).click();
    await p.getByRole('heading', { level: 1, name: 'This request has expired' }).waitFor();
    await expectNothingToAnswer(p);
    expect(await grants(agentId)).toEqual(before);
  });

  it('a consent address opened in a new tab (its token is not in the address): "no longer here", nothing to allow', async () => {
    const first = await open(await consentLink());
    await first.page.getByRole('button', { name: /^allow/i }).waitFor();
    // What the address bar shows once the page read its session_token: the token is gone.
    await expect.poll(() => new URL(first.page.url()).searchParams.has('session_token')).toBe(false);
    const shown = new URL(first.page.url());
    expect(shown.searchParams.get('request')).toBe('1');

    const copy = await open(`${shown.pathname}${shown.search}`);
    const p = copy.page;
    await p.getByRole('heading', { level: 1, name: 'This request is no longer here' }).waitFor();
    await expect.poll(() => focused(p)).toBe('This request is no longer here');
    await p.getByText(/go back to the application that sent you here and start again/).waitFor();
    await expectNothingToAnswer(p);
    await reviewPage(copy, 'consent-request-lost');

    // The agent's own page is one deliberate step away, without the request's mark.
    await p.getByRole('button', { name: "Review this agent's access" }).click();
    await p.getByRole('heading', { level: 1, name: 'Inbox Helper' }).waitFor();
    await expect.poll(() => new URL(p.url()).searchParams.has('request')).toBe(false);

    // The request itself is untouched: the first tab still answers it.
    const { landed } = await interceptRedirect(first.page);
    await first.page.getByRole('button', { name: /^allow/i }).click();
    expect(new URL((await landed).url()).searchParams.get('code')).not.toBeNull();
  });

  it('the consent address reopened after the request was answered: "no longer here", and Back after answering too', async () => {
    // An agent of its own: the one above now has a grant, so its requests no longer need consent.
    const noteTaker = await created('/api/agents', {
      display_name: 'Note Taker',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: mailSet }],
    });
    const page = await open(await consentLink(noteTaker, {}, 'st-answered'));
    const p = page.page;
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    await expect.poll(() => new URL(p.url()).searchParams.get('request')).toBe('1');
    const address = new URL(p.url());
    const { landed } = await interceptRedirect(p);
    await p.getByRole('button', { name: /^deny/i }).click();
    expect(new URL((await landed).url()).searchParams.get('error')).toBe('access_denied');

    // Back from the application to the consent address: the tab no longer keeps the request.
    await p.waitForURL((u) => u.href.startsWith(REDIRECT));
    await p.goBack();
    await p.waitForURL((u) => u.pathname === address.pathname);
    await p.getByRole('heading', { level: 1, name: 'This request is no longer here' }).waitFor();
    await expectNothingToAnswer(p);

    const again = await open(`${address.pathname}${address.search}`);
    await again.page.getByRole('heading', { level: 1, name: 'This request is no longer here' }).waitFor();
    await expectNothingToAnswer(again.page);
  });

  it('a consent address whose session token the broker does not know: expired, start again; nothing to allow', async () => {
    const page = await open(`/agents/${agentId}?session_token=not-a-session-token`);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'This request has expired' }).waitFor();
    await p.getByText(/Go back to the application that sent you here and start again/).waitFor();
    await expectNothingToAnswer(p);
    await reviewPage(page, 'consent-unknown-token');
  });

  it('step-up consent marks what the request asks for, in words; each MCP server is shown once and explained', async () => {
    const granted = await http(`${fx.base}/api/consent/agents/${researchId}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': ALICE, origin: fx.base, 'content-type': 'application/json' },
      body: JSON.stringify({ granted_permission_sets: { [mailSet]: [mail] } }),
    });
    expect(granted.status, granted.text).toBe(201);
    const page = await open(await consentLink(researchId, { resource: TICKETS_URI, scope: 'tickets.read' }));
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Allow Research Assistant to use Tickets?' }).waitFor();
    const entry = p
      .getByRole('list', { name: 'MCP servers in Help desk' })
      .getByRole('listitem')
      .filter({ hasText: TICKETS_URI });
    // The server and the scope the request names are marked; the set's other scope is not.
    const asked = entry.getByRole('listitem').filter({ hasText: 'Read your tickets' });
    const alongside = entry.getByRole('listitem').filter({ hasText: 'Answer your tickets' });
    await asked.getByText('Asked for now', { exact: true }).waitFor();
    await alongside.waitFor();
    expect(await alongside.getByText('Asked for now').count()).toBe(0);
    // One mark on the asked scope, one on the server itself.
    expect(await entry.getByText('Asked for now', { exact: true }).count()).toBe(2);
    await p.getByText(/^Marked “Asked for now”: what Research Assistant asks for in this request\./).waitFor();
    // Once on the page, with one sentence saying what an MCP server is.
    expect(await p.getByText('Tickets', { exact: true }).count()).toBe(1);
    expect(await p.getByText(TICKETS_URI, { exact: true }).count()).toBe(1);
    await p.getByText(/^An MCP server is a service whose tools the agent calls for you/).waitFor();
    await reviewPage(page, 'consent-step-up-asked');
    expect(page.pageErrors).toEqual([]);
  });
});
