import { http, type RecordedPage } from '@broker/testing';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALICE,
  BOB,
  adminCreated,
  PLACEHOLDER_MAIL,
  placeholderService,
  reviewPage,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-fixture';

const REDIRECT = 'https://agent.example.com/cb';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/**
 * A consent link is answered once, in a real Chromium: opened again after Allow or Deny, the
 * page says the request was already answered and what was decided, with no Allow or Deny to
 * press; a page left open while the request was answered elsewhere says so when pressed.
 */
describe('console: an answered consent link', () => {
  let fx: ConsoleFixture;
  let agentId: string;
  const opened: RecordedPage[] = [];

  beforeAll(async () => {
    fx = await startConsoleFixture();
    const service = await placeholderService(fx.admin, PLACEHOLDER_MAIL);
    const set = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Read mail',
      service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
    });
    agentId = await adminCreated(fx.admin, '/api/agents', {
      display_name: 'Inbox Helper',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: set }],
    });
  });

  afterAll(async () => {
    for (const page of opened) await page.close().catch(() => undefined);
    await fx?.stop();
  });

  /** The consent link `/oauth2/authorize` sends the person to (path and query on the console). */
  async function consentLink(principal: string): Promise<string> {
    const url = new URL(`${fx.base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: agentId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state: 'st',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const response = await http(url.toString(), { headers: { 'x-remote-user': principal } });
    expect(response.status, response.text).toBe(302);
    const location = new URL(response.headers.location as string);
    return `${location.pathname}${location.search}`;
  }

  /** The agent's redirect_uri is on another host: the browser's request to it is answered here and recorded. */
  async function interceptRedirect(page: Page): Promise<{ landed: Promise<Request> }> {
    await page
      .context()
      .route(`${REDIRECT}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/plain', body: 'agent callback' }),
      );
    const landed = page.waitForRequest((request) => request.url().startsWith(REDIRECT), { timeout: 15_000 });
    landed.catch(() => undefined); // awaited by the test; a test failing before that must not add an unhandled rejection
    return { landed };
  }

  async function open(path: string, principal: string): Promise<RecordedPage> {
    const page = await fx.open(path, principal);
    opened.push(page);
    return page;
  }

  /** The answered state as the person sees it: the words, and nothing left to press. */
  async function expectAnswered(page: RecordedPage, decision: RegExp): Promise<void> {
    const p = page.page;
    const notice = p.getByRole('status').filter({ hasText: 'This request was already answered' });
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(decision);
    expect(await p.getByRole('button', { name: /^allow/i }).count()).toBe(0);
    expect(await p.getByRole('button', { name: /^deny/i }).count()).toBe(0);
  }

  it('after Allow, the same link shows "already answered — you allowed it" and no Allow or Deny', async () => {
    const link = await consentLink(ALICE);
    const first = await open(link, ALICE);
    const { landed } = await interceptRedirect(first.page);
    await first.page.getByRole('button', { name: /^allow/i }).click();
    expect(new URL((await landed).url()).searchParams.get('code')).not.toBeNull();

    const again = await open(link, ALICE);
    await expectAnswered(again, /you allowed it/);
    await reviewPage(again, 'consent-already-answered');
    expect(again.pageErrors).toEqual([]);
  });

  it('after Deny, the same link shows "already answered — you denied it"', async () => {
    const link = await consentLink(BOB);
    const first = await open(link, BOB);
    const { landed } = await interceptRedirect(first.page);
    await first.page.getByRole('button', { name: /^deny/i }).click();
    expect(new URL((await landed).url()).searchParams.get('error')).toBe('access_denied');

    const again = await open(link, BOB);
    await expectAnswered(again, /you denied it/);
  });

  it('a page left open while the request was answered elsewhere: Allow shows the earlier answer, nothing is sent to the agent', async () => {
    const person = 'carol@example.com';
    const link = await consentLink(person);
    const stale = await open(link, person);
    await stale.page.getByRole('button', { name: /^allow/i }).waitFor();
    const token = new URLSearchParams(link.split('?')[1]).get('session_token') as string;
    const denied = await http(
      `${fx.base}/api/consent/agents/${agentId}/deny?session_token=${encodeURIComponent(token)}`,
      { method: 'POST', headers: { 'x-remote-user': person, origin: fx.base } },
    );
    expect(denied.status, denied.text).toBe(200);

    let navigatedAway = false;
    stale.page.on('request', (request) => {
      if (request.url().startsWith(REDIRECT) || request.url().includes('/oauth2/authorize')) navigatedAway = true;
    });
    await stale.page.getByRole('button', { name: /^allow/i }).click();
    await expectAnswered(stale, /you denied it/);
    expect(navigatedAway).toBe(false);
    await reviewPage(stale, 'consent-answered-elsewhere');
  });
});
