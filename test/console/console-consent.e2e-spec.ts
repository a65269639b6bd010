import { randomUUID } from 'node:crypto';
import { http, type RecordedPage } from '@broker/testing';
import * as oauth from 'oauth4webapi';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCreated,
  ALICE,
  BOB,
  expectAccessible,
  PLACEHOLDER_MAIL,
  placeholderService,
  reviewPage,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-fixture';

const REDIRECT = 'https://agent.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true };
const HOSTILE = '<img src=x onerror="window.__pwned=1;alert(1)">';

/**
 * in a real Chromium against a real broker serving its console:
 * consent Allow (the code redeems with PKCE) and Deny, the keyboard alone, the error messages,
 * hostile agent text, the console's headers.
 */
describe('console: the consent page in a browser', () => {
  let fx: ConsoleFixture;
  let as: oauth.AuthorizationServer;
  let serviceId: string;
  let mailSet: string;
  let calendarSet: string;
  const opened: RecordedPage[] = [];

  function agent(body: Record<string, unknown>): Promise<string> {
    return adminCreated(fx.admin, '/api/agents', {
      redirect_uris: [REDIRECT],
      permission_sets: [
        { permission_set_id: mailSet },
        { permission_set_id: calendarSet, requirement_type: 'optional' },
      ],
      ...body,
    });
  }

  async function open(path: string, principal: string | null = ALICE): Promise<RecordedPage> {
    const page = await fx.open(path, principal);
    opened.push(page);
    return page;
  }

  beforeAll(async () => {
    fx = await startConsoleFixture();
    serviceId = await placeholderService(fx.admin, PLACEHOLDER_MAIL);
    const calendar = await placeholderService(fx.admin, {
      name: 'Calendar',
      clientId: 'c',
      scope: 'calendar.read',
      description: 'See your calendar',
      resource: 'https://calendar.example.com',
    });
    mailSet = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Read mail',
      description: 'Reads your inbox to summarise it',
      service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
    });
    calendarSet = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Calendar',
      description: 'Looks at your calendar',
      service_scopes: [{ service_id: calendar, scopes: ['calendar.read'] }],
    });
    const issuer = new URL(fx.base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    for (const page of opened) await page.close().catch(() => undefined);
    await fx?.stop();
  });

  /** Alice's grants to the agent, as the API lists them. */
  async function grants(
    clientId: string,
  ): Promise<{ valid_until: string | null; granted_permission_sets: Record<string, string[]> }[]> {
    const response = await http(`${fx.base}/api/consent/agents/${clientId}/grants`, {
      headers: { 'x-remote-user': ALICE },
    });
    expect(response.status, response.text).toBe(200);
    return response.json<{
      data: { valid_until: string | null; granted_permission_sets: Record<string, string[]> }[];
    }>().data;
  }

  /** The agent's authorization request, as oauth4webapi builds it: the URL the browser is sent to, the verifier and the state. */
  async function authorizationRequest(clientId: string): Promise<{ url: string; verifier: string; state: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    const params = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mail.read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { url: url.toString(), verifier, state };
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

  /** The agent's authorize request in the browser, landing on the consent page (session_token read, then removed from the address bar). */
  async function startAtConsent(
    clientId: string,
    principal = ALICE,
  ): Promise<{ page: RecordedPage; verifier: string; state: string; landed: Promise<Request> }> {
    const { url, verifier, state } = await authorizationRequest(clientId);
    const page = await fx.blank(principal);
    opened.push(page);
    const { landed } = await interceptRedirect(page.page);
    await page.page.goto(url);
    await page.page.waitForURL((u) => u.pathname === `/agents/${clientId}`);
    await page.page.getByRole('button', { name: /^allow/i }).waitFor();
    return { page, verifier, state, landed };
  }

  it('Allow: the authorization request lands on the consent page, the person picks sets and an expiry, the code redeems with PKCE, the grant is listed on /agents', async () => {
    const clientId = await agent({
      display_name: 'Inbox Summariser',
      description: 'Summarises your inbox every morning.',
      governance_url: 'https://agent.example.com/governance',
      user_documentation_url: 'https://agent.example.com/docs',
    });
    const { page, verifier, state, landed } = await startAtConsent(clientId);
    const p = page.page;
    // The session_token is read, then removed from the address bar.
    await expect.poll(() => new URL(p.url()).searchParams.has('session_token')).toBe(false);
    await p
      .getByRole('heading', { name: /Inbox Summariser/ })
      .first()
      .waitFor();
    await expect.poll(() => p.getByText('Summarises your inbox every morning.').count()).toBeGreaterThan(0);
    await expect.poll(() => p.getByText('Read your mail').count()).toBeGreaterThan(0);
    await reviewPage(page, 'consent');
    // Picks the optional calendar set too, and 30 days.
    await p.getByRole('checkbox', { name: /Calendar/ }).check();
    await chooseExpiry(p, /30 days/i);
    await p.getByRole('button', { name: /^allow/i }).click();
    const callback = new URL((await landed).url());
    expect(callback.searchParams.get('state')).toBe(state);
    const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    expect(tokens.scope).toBe('mail.read');
    expect(tokens.access_token.length).toBeGreaterThan(20);

    const [grant] = await grants(clientId);
    expect(Object.keys(grant?.granted_permission_sets ?? {}).sort()).toEqual([mailSet, calendarSet].sort());
    expect(Date.parse(grant?.valid_until as string) - fx.clock.now().getTime()).toBeGreaterThan(29 * 86_400_000);

    const agents = await open('/agents');
    await agents.page.getByRole('link', { name: 'Inbox Summariser' }).waitFor();
    await reviewPage(agents, 'agents');
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);

    // Revoke: the confirmation says what stops working; Cancel keeps the grant, confirming removes it.
    const card = agents.page.getByRole('listitem').filter({ hasText: 'Inbox Summariser' });
    await card.getByRole('button', { name: 'Revoke' }).click();
    const dialog = agents.page.getByRole('dialog', { name: 'Revoke access for Inbox Summariser?' });
    await dialog.getByText('every service you granted it stops working').waitFor();
    await reviewPage(agents, 'agents-revoke');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await grants(clientId)).toHaveLength(1);
    await card.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke access' }).click();
    await card.waitFor({ state: 'detached' });
    expect(await grants(clientId)).toEqual([]);
  });

  it('Deny: the agent receives error=access_denied with its state', async () => {
    const clientId = await agent({ display_name: 'Denied Agent' });
    const { page, state, landed } = await startAtConsent(clientId);
    await page.page.getByRole('button', { name: /^deny/i }).click();
    const callback = new URL((await landed).url());
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.has('code')).toBe(false);
    expect(await grants(clientId)).toEqual([]);
  });

  it('leaving the consent page keeps the request for the tab: other pages lead back to it, Back shows it again, Deny answers the agent and forgets it', async () => {
    const clientId = await agent({ display_name: 'Planner' });
    const { page, state } = await startAtConsent(clientId);
    const p = page.page;
    await expect.poll(() => new URL(p.url()).searchParams.has('session_token')).toBe(false);
    // Another page of the console: a banner leads back to the waiting request.
    await p.goto(`${fx.base}/connections`);
    const banner = p.getByRole('region', { name: 'Requests waiting for your answer' });
    await banner.getByText('is waiting for your answer.').waitFor();
    expect(await banner.textContent()).toContain('Planner is waiting for your answer.');
    await reviewPage(page, 'consent-pending-banner');
    // Back: the request again, with Allow and Deny (not "does not act for you" with Cancel).
    await p.goBack();
    await p.waitForURL((u) => u.pathname === `/agents/${clientId}`);
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    expect(await p.getByText('This agent does not act for you', { exact: false }).count()).toBe(0);
    expect(
      await p.getByRole('region', { name: 'Requests waiting for your answer' }).count(),
      'no banner on the request itself',
    ).toBe(0);
    // From another page again, the banner's link returns to it.
    await p.goto(`${fx.base}/agents`);
    await banner.getByRole('link', { name: 'Return to the request' }).click();
    await p.waitForURL((u) => u.pathname === `/agents/${clientId}`);
    // The agent's redirect_uri (answered by the route startAtConsent set up) receives the answer.
    const landed = p.waitForRequest((request) => request.url().startsWith(REDIRECT), { timeout: 15_000 });
    await p.getByRole('button', { name: /^deny/i }).click();
    const callback = new URL((await landed).url());
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(state);
    // The browser has left for the agent's redirect_uri before the next address is opened (else that one interrupts it).
    await p.waitForURL((u) => u.href.startsWith(REDIRECT));
    // Answered: forgotten, no banner any more.
    await p.goto(`${fx.base}/agents`);
    await p.locator('main h1').first().waitFor();
    expect(await p.getByRole('region', { name: 'Requests waiting for your answer' }).count()).toBe(0);
    expect(
      await p.evaluate(() => (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length),
    ).toBe(0);
    expect(page.pageErrors).toEqual([]);
  });

  it('works with the keyboard alone: Tab to the choices and to Allow, Space and Enter, and the agent gets its code', async () => {
    const clientId = await agent({ display_name: 'Keyboard Agent' });
    const { page, state, landed } = await startAtConsent(clientId);
    const p = page.page;
    await p.locator('body').focus();
    const focused = () =>
      p.evaluate(() => {
        const element = (
          globalThis as unknown as {
            document: {
              activeElement: {
                tagName: string;
                type?: string;
                checked?: boolean;
                textContent: string | null;
                getAttribute(n: string): string | null;
              } | null;
            };
          }
        ).document.activeElement;
        return element === null
          ? null
          : {
              tag: element.tagName,
              type: element.type ?? null,
              checked: element.checked ?? null,
              text: (element.textContent ?? '').trim(),
              label: element.getAttribute('aria-label'),
            };
      });
    // A visible focus indicator: an outline or a ring (box-shadow) on the focused element while tabbing.
    const focusVisible = () =>
      p.evaluate(() => {
        const scope = globalThis as unknown as {
          document: { activeElement: unknown };
          getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string; boxShadow: string };
        };
        const style = scope.getComputedStyle(scope.document.activeElement);
        return (style.outlineStyle !== 'none' && style.outlineWidth !== '0px') || style.boxShadow !== 'none';
      });
    const invisible: string[] = [];
    let reached = false;
    let tickedCalendar = false;
    for (let i = 0; i < 80 && !reached; i++) {
      await p.keyboard.press('Tab');
      const element = await focused();
      if (element === null || element.tag === 'BODY') continue;
      if (!(await focusVisible())) invisible.push(`${element.tag} ${element.label ?? element.text.slice(0, 40)}`);
      // The optional Calendar set: ticked with Space when its checkbox has focus.
      if (
        element.type === 'checkbox' &&
        !tickedCalendar &&
        (await p.evaluate(() => {
          const active = (
            globalThis as unknown as {
              document: {
                activeElement: { closest(s: string): { textContent: string | null } | null; id: string } | null;
                querySelector(s: string): { textContent: string | null } | null;
              };
            }
          ).document;
          const input = active.activeElement;
          const label =
            input === null ? null : (input.closest('label') ?? active.querySelector(`label[for="${input.id}"]`));
          return /Calendar/.test(label?.textContent ?? '');
        }))
      ) {
        await p.keyboard.press('Space');
        tickedCalendar = true;
      }
      if (element.tag === 'BUTTON' && /^allow/i.test(element.text)) reached = true;
    }
    expect(reached, 'Tab reaches the Allow button').toBe(true);
    expect(tickedCalendar, "Tab reaches the optional set's checkbox").toBe(true);
    expect(invisible, 'every element reached with Tab shows where the focus is').toEqual([]);
    await p.keyboard.press('Enter');
    const callback = new URL((await landed).url());
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('code')).toBeTruthy();
    const [grant] = await grants(clientId);
    expect(Object.keys(grant?.granted_permission_sets ?? {}).sort()).toEqual([mailSet, calendarSet].sort());
  });

  it('hostile agent text and a javascript: logo: shown as text, nothing executes, no logo', async () => {
    const hostile = {
      display_name: HOSTILE,
      description: `${HOSTILE} <script>alert(2)</script>`,
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: mailSet }],
    };
    // The admin API already refuses a javascript: logo (https or loopback http only)…
    expect(
      (await fx.admin.post('/api/agents', { ...hostile, logo_url: 'javascript:alert(document.domain)' })).status,
    ).toBe(400);
    const response = await fx.admin.post('/api/agents', hostile);
    expect(response.status, response.text).toBe(201);
    const clientId = response.json<{ id: string }>().id;
    const granted = await http(`${fx.base}/api/consent/agents/${clientId}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': BOB, 'content-type': 'application/json', origin: fx.base },
      body: JSON.stringify({ granted_permission_sets: { [mailSet]: [serviceId] } }),
    });
    expect(granted.status, granted.text).toBe(201);

    for (const path of [`/agents/${clientId}`, '/agents']) {
      const page = await fx.blank(BOB);
      opened.push(page);
      let rewritten = 0;
      // …so the page's own defence is tested with answers rewritten on the way: every logo a javascript: or data: URL.
      await page.context.route(`${fx.base}/api/consent/agents**`, async (route) => {
        // The latest route wins in Playwright: this one adds the proxy's principal header itself.
        const original = await route.fetch({ headers: { ...route.request().headers(), 'x-remote-user': BOB } });
        rewritten += 1;
        const text = (await original.text()).replace(
          /"logo_(url|uri)":(null|"[^"]*")/g,
          (_m, key: string) =>
            `"logo_${key}":${JSON.stringify(key === 'url' ? 'javascript:alert(document.domain)' : 'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg" onload="alert(3)"/>')}`,
        );
        const headers = { ...original.headers() };
        delete headers['content-length'];
        delete headers['content-encoding'];
        await route.fulfill({ status: original.status(), headers, body: text });
      });
      await page.page.goto(`${fx.base}${path}`);
      const p = page.page;
      await expect
        .poll(() => p.getByText(HOSTILE, { exact: false }).count(), {
          message: `${path} shows the hostile name as text`,
          timeout: 10_000,
        })
        .toBeGreaterThan(0);
      expect(rewritten, 'the agent answers went through the rewrite').toBeGreaterThan(0);
      // Give an injected handler every chance to run.
      await p.waitForTimeout(300);
      expect(await p.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(page.dialogs).toEqual([]);
      expect(page.pageErrors).toEqual([]);
      expect(page.unexpectedErrors(), 'no CSP violation report: nothing tried to run').toEqual([]);
      expect(
        page.requests.filter((url) => url.endsWith('/x') || url.startsWith('javascript:') || url.startsWith('data:')),
      ).toEqual([]);
      // No logo image at all, and nothing points at the hostile URLs.
      expect(await p.locator('main img').count()).toBe(0);
      expect(
        await p.locator('[src^="javascript:"], [href^="javascript:"], [src^="data:"], [href^="data:"]').count(),
      ).toBe(0);
      await expectAccessible(page, `hostile ${path}`);
      if (path === '/agents') await reviewPage(page, 'agents-hostile');
      else await reviewPage(page, 'consent-hostile');
    }
  });

  describe('messages instead of a blank page', () => {
    it('an unknown agent id: not found', async () => {
      const page = await open(`/agents/${randomUUID()}`);
      await page.page
        .getByRole('alert')
        .filter({ hasText: /not found/i })
        .first()
        .waitFor();
      await reviewPage(page, 'consent-unknown-agent');
    });

    // The page is reviewed (axe, screenshots) in console-consent-page.e2e-spec.ts ("no identity from the sign-in proxy").
    it('no principal at all: the broker says it received no identity (reloading would not help), not "expired"', async () => {
      const page = await open('/agents', null);
      await page.page
        .getByRole('alert')
        .filter({ hasText: /did not receive your identity/i })
        .first()
        .waitFor();
      expect(await page.page.getByText(/sign-in expired/i).count()).toBe(0);
    });

    it("another person's session_token: a clear message, no consent form", async () => {
      const clientId = await agent({ display_name: 'Foreign Token Agent' });
      const { url } = await authorizationRequest(clientId);
      const location = (await http(url, { headers: { 'x-remote-user': BOB } })).headers.location as string;
      const consent = new URL(location);
      expect(consent.pathname).toBe(`/agents/${clientId}`);
      const page = await open(`${consent.pathname}${consent.search}`, ALICE);
      await page.page.getByRole('alert').first().waitFor();
      expect(await page.page.getByRole('button', { name: /^allow/i }).count()).toBe(0);
    });

    // Last: it moves the broker's clock past the session token's 10 minutes.
    it('an expired session_token: "this request has expired", no consent form', async () => {
      const clientId = await agent({ display_name: 'Slow Agent' });
      const { url } = await authorizationRequest(clientId);
      const location = new URL((await http(url, { headers: { 'x-remote-user': ALICE } })).headers.location as string);
      fx.clock.advance(11 * 60_000);
      const page = await open(`${location.pathname}${location.search}`);
      await page.page
        .getByRole('alert')
        .filter({ hasText: /expired/i })
        .first()
        .waitFor();
      expect(await page.page.getByRole('button', { name: /^allow/i }).count()).toBe(0);
      await reviewPage(page, 'consent-expired');
    });

    // After the one above (the clock is past the first session tokens): a request kept for the tab expires on the broker's side.
    it('a request kept for the tab that expired meanwhile: Back says it expired (start again), and it is forgotten', async () => {
      const clientId = await agent({ display_name: 'Late Agent' });
      const { page } = await startAtConsent(clientId);
      const p = page.page;
      await expect.poll(() => new URL(p.url()).searchParams.has('session_token')).toBe(false);
      await p.goto(`${fx.base}/connections`);
      await p.getByRole('region', { name: 'Requests waiting for your answer' }).waitFor();
      fx.clock.advance(11 * 60_000);
      await p.goBack();
      await p.waitForURL((u) => u.pathname === `/agents/${clientId}`);
      await p.getByRole('alert').filter({ hasText: 'This request has expired' }).first().waitFor();
      expect(await p.getByRole('button', { name: /^allow/i }).count()).toBe(0);
      await p.goto(`${fx.base}/connections`);
      await p.locator('main h1').first().waitFor();
      expect(await p.getByRole('region', { name: 'Requests waiting for your answer' }).count()).toBe(0);
    });
  });

  describe('headers', () => {
    it('the console page /agents/:id carries the strict CSP and anti-framing headers', async () => {
      const page = await open(`/agents/${randomUUID()}`);
      const response = await page.page.goto(`${fx.base}/agents/${randomUUID()}`);
      const headers = response?.headers() ?? {};
      const csp = headers['content-security-policy'] ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self'/);
      expect(csp).not.toContain("unsafe-inline' ;");
      expect(/script-src[^;]*'unsafe-inline'/.test(csp)).toBe(false);
      expect(csp).not.toContain('unsafe-eval');
      expect(headers['x-frame-options']).toBe('DENY');
      expect(headers['referrer-policy']).toBe('no-referrer');
      expect(headers['x-content-type-options']).toBe('nosniff');
      expect(page.unexpectedErrors(), 'the console runs under its own CSP without a violation').toEqual([]);
    });

    it("an /api/* 404 is still the API's JSON error, not the console", async () => {
      const page = await open('/agents');
      const response = await page.page.goto(`${fx.base}/api/does-not-exist`);
      expect(response?.status()).toBe(404);
      expect(response?.headers()['content-type']).toMatch(/^application\/json/);
      expect(await response?.json()).toMatchObject({ error: expect.any(String) as string });
      // A browser's unknown page is the console's "page not found" page, still a 404.
      const unknown = await page.page.goto(`${fx.base}/not-a-console-page`);
      expect(unknown?.status()).toBe(404);
      expect(unknown?.headers()['content-type']).toMatch(/^text\/html/);
    });
  });
});

/** The expiry choice, whether the page offers it as radio buttons or a select. */
async function chooseExpiry(page: Page, choice: RegExp): Promise<void> {
  const radio = page.getByRole('radio', { name: choice });
  if ((await radio.count()) > 0) {
    await radio.first().check();
    return;
  }
  const select = page.getByRole('combobox', { name: /expir|valid|until|duration/i });
  const options = await select.locator('option').allTextContents();
  const label = options.find((text) => choice.test(text));
  if (label === undefined) throw new Error(`no expiry choice ${choice} among ${JSON.stringify(options)}`);
  await select.selectOption({ label });
}
