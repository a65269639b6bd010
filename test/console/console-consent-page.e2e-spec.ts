import { http, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

const REDIRECT = 'https://agent.example.com/cb';
const DAY = 86_400_000;

interface GrantList {
  data: { valid_until: string | null; granted_permission_sets: Record<string, string[]> }[];
}

/**
 * The consent page without an authorization request: the current grant
 * pre-selected, the expiry choices, Allow showing a confirmation, Cancel instead of Deny;
 * with a request, Connect returns here with the request.
 */
describe('console: the consent page edits an existing grant', () => {
  let fx: ConsoleFixture;
  let mail: string;
  let calendar: string;
  let mailSet: string;
  let calendarSet: string;
  let agentId: string;

  const grants = async () =>
    (
      await http(`${fx.base}/api/consent/agents/${agentId}/grants`, { headers: { 'x-remote-user': ALICE } })
    ).json<GrantList>().data;

  beforeAll(async () => {
    fx = await startConsoleFixture();
    const idp = 'https://idp.example.com';
    const service = async (name: string, scope: string, description: string, resource: string) =>
      (
        await fx.admin.post('/api/services', {
          display_name: name,
          client_id: name,
          issuer_uri: idp,
          authorization_endpoint: `${idp}/a`,
          token_endpoint: `${idp}/t`,
          scopes: [{ scope, description }],
          protected_resources: [resource],
        })
      ).json<{ id: string }>().id;
    mail = await service('Mail', 'mail.read', 'Read your mail', 'https://mail.example.com');
    calendar = await service('Calendar', 'calendar.read', 'See your calendar', 'https://calendar.example.com');
    mailSet = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Read mail',
        description: 'Reads your inbox',
        service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    calendarSet = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Calendar',
        description: 'Looks at your calendar',
        service_scopes: [{ service_id: calendar, scopes: ['calendar.read'] }],
      })
    ).json<{ id: string }>().id;
    const created = await fx.admin.post('/api/agents', {
      display_name: 'Planner',
      description: 'Plans your week.',
      redirect_uris: [REDIRECT],
      permission_sets: [
        { permission_set_id: mailSet },
        { permission_set_id: calendarSet, requirement_type: 'optional' },
      ],
    });
    expect(created.status, created.text).toBe(201);
    agentId = created.json<{ id: string }>().id;
    const validUntil = new Date(fx.clock.now().getTime() + 10 * DAY).toISOString();
    const granted = await http(`${fx.base}/api/consent/agents/${agentId}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': ALICE, 'content-type': 'application/json', origin: fx.base },
      body: JSON.stringify({
        granted_permission_sets: { [mailSet]: [mail], [calendarSet]: [calendar] },
        valid_until: validUntil,
      }),
    });
    expect(granted.status, granted.text).toBe(201);
  });

  afterAll(async () => {
    await fx?.stop();
  });

  it('pre-selects the current grant, offers Cancel instead of Deny, and Allow with no expiry shows the confirmation', async () => {
    const page = await fx.open(`/agents/${agentId}`);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Planner' }).waitFor();
    // The mandatory set is fixed on; the optional one is ticked because the grant holds it; the expiry is the grant's date.
    expect(await p.getByRole('checkbox', { name: 'Read mail' }).isChecked()).toBe(true);
    expect(await p.getByRole('checkbox', { name: 'Read mail' }).isDisabled()).toBe(true);
    expect(await p.getByRole('checkbox', { name: 'Calendar' }).isChecked()).toBe(true);
    expect(await p.getByRole('radio', { name: 'Until a date' }).isChecked()).toBe(true);
    expect(await p.getByRole('button', { name: /^deny/i }).count()).toBe(0);
    await p.getByRole('link', { name: 'Cancel' }).waitFor();
    await reviewPage(page, 'consent-edit');

    await p.getByRole('checkbox', { name: 'Calendar' }).uncheck();
    await p.getByRole('radio', { name: 'No expiry' }).check();
    await p.getByRole('button', { name: /^allow/i }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /Planner may now act for you/ })
      .waitFor();
    const [grant] = await grants();
    expect(grant?.valid_until).toBeNull();
    expect(grant?.granted_permission_sets).toEqual({ [mailSet]: [mail] });
    await reviewPage(page, 'consent-saved');
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('refuses a past date before sending anything', async () => {
    const before = await grants();
    const page = await fx.open(`/agents/${agentId}`);
    const p = page.page;
    await p.getByRole('radio', { name: 'Until a date' }).check();
    await p.getByLabel('Expiry date').fill('2001-01-01');
    await p.getByRole('button', { name: /^allow/i }).click();
    await p
      .getByRole('alert')
      .filter({ hasText: /future/ })
      .waitFor();
    expect(await grants()).toEqual(before);
  });

  it('with a request: Connect goes to the third-party authorize route with this page and its session_token as redirect_uri', async () => {
    const authorize = new URL(`${fx.base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: agentId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mail.read',
      state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    // The grant exists: revoke it so the request goes to the consent page.
    await http(`${fx.base}/api/consent/agents/${agentId}/grants`, {
      method: 'DELETE',
      headers: { 'x-remote-user': ALICE, origin: fx.base },
    });
    const location = new URL(
      (await http(authorize.toString(), { headers: { 'x-remote-user': ALICE } })).headers.location as string,
    );
    const token = location.searchParams.get('session_token');
    expect(token).toBeTruthy();
    const page = await fx.open(`${location.pathname}${location.search}`);
    const p = page.page;
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    // The token leaves the address; only the mark that it was a request's stays.
    await expect.poll(() => new URL(p.url()).search).toBe('?request=1');
    const href = await p.getByRole('link', { name: 'Connect Mail' }).getAttribute('href');
    const connect = new URL(href as string, fx.base);
    expect(connect.pathname).toBe(`/api/third-party/${mail}/oauth2/authorize`);
    const back = new URL(connect.searchParams.get('redirect_uri') as string);
    expect(back.pathname).toBe(`/agents/${agentId}`);
    expect(back.searchParams.get('session_token')).toBe(token);
    // Nothing in localStorage; the pending request only for this tab (docs/security.md: kept for the browser tab only).
    expect(
      await p.evaluate(() => {
        const { localStorage, sessionStorage } = globalThis as unknown as {
          localStorage: { length: number };
          sessionStorage: { length: number; key(index: number): string | null };
        };
        return [
          localStorage.length,
          Array.from({ length: sessionStorage.length }, (_, index) => sessionStorage.key(index)),
        ];
      }),
    ).toEqual([0, [`broker.consent-request.${agentId}`]]);

    // Coming back from the provider: the connected service is confirmed, the request still pending.
    const returned = await fx.open(
      `/agents/${agentId}?session_token=${encodeURIComponent(token as string)}&success=true&service_id=${mail}`,
    );
    await returned.page.getByRole('button', { name: /^deny/i }).waitFor();
    await expect.poll(() => new URL(returned.page.url()).search).toBe('?request=1');
  });

  /** A pending authorization request of a new agent (Mail required, Calendar optional): the consent page's path with its session_token. */
  async function pendingRequest(name: string): Promise<{ path: string; id: string }> {
    const created = await fx.admin.post('/api/agents', {
      display_name: name,
      description: 'Sorts your mail.',
      redirect_uris: [REDIRECT],
      permission_sets: [
        { permission_set_id: mailSet },
        { permission_set_id: calendarSet, requirement_type: 'optional' },
      ],
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json<{ id: string }>().id;
    const authorize = new URL(`${fx.base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mail.read',
      state: 's2',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    const location = new URL(
      (await http(authorize.toString(), { headers: { 'x-remote-user': ALICE } })).headers.location as string,
    );
    return { path: `${location.pathname}${location.search}`, id };
  }

  /** A page whose document answer is not a 200 (fx.open insists on one): its status once the console has rendered. */
  async function openError(
    path: string,
    principal: string | null = ALICE,
  ): Promise<{ page: RecordedPage; status: number | undefined }> {
    const page = await fx.blank(principal);
    const response = await page.page.goto(`${fx.base}${path}`);
    await page.page.locator('main').first().waitFor();
    return { page, status: response?.status() };
  }

  describe('a human page for everything a browser lands on', () => {
    it('an unknown page: 404 with the console\'s "page not found", links to the real pages', async () => {
      const { page, status } = await openError('/settings');
      expect(status).toBe(404);
      const p = page.page;
      await p.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
      await p.locator('main').getByRole('link', { name: 'Your agents' }).waitFor();
      await expect.poll(() => p.title()).toBe('Page not found · Agent Identity Broker');
      await reviewPage(page, 'not-found');
    });

    it('an authorization request the broker cannot send back (unknown client): 400, a page that says what happened and what to do, no raw JSON', async () => {
      const query = new URLSearchParams({
        client_id: '0b6a2f4e-8d1c-4f3a-9e2b-5c7d8e9f0a1b',
        redirect_uri: 'https://evil.example/<b>x</b>',
        response_type: 'code',
        error_description: '<img src=x onerror=alert(1)>',
      });
      const { page, status } = await openError(`/oauth2/authorize?${query.toString()}`);
      expect(status).toBe(400);
      const p = page.page;
      await p.getByRole('heading', { level: 1, name: 'This application is not known to the broker' }).waitFor();
      await p
        .getByText(/Go back to the application/)
        .first()
        .waitFor();
      expect(await p.locator('body').innerText()).not.toMatch(/invalid_client|evil\.example|error_description|\{/);
      expect(await p.getByRole('navigation', { name: 'Console' }).count()).toBe(0);
      await expect.poll(() => p.title()).toBe('Request not accepted · Agent Identity Broker');
      expect(page.dialogs).toEqual([]);
      await reviewPage(page, 'authorize-error');
    });

    it('a registered client with an unregistered redirect_uri: 400 and its own words', async () => {
      const query = new URLSearchParams({
        client_id: agentId,
        redirect_uri: 'https://elsewhere.example/cb',
        response_type: 'code',
      });
      const { page, status } = await openError(`/oauth2/authorize?${query.toString()}`);
      expect(status).toBe(400);
      await page.page
        .getByRole('heading', { level: 1, name: 'The application sent you from an address the broker does not know' })
        .waitFor();
    });

    it('a malformed agent or approval id: "This agent link is not valid", not the API\'s validation text', async () => {
      const page = await fx.open('/agents/not-a-uuid');
      const p = page.page;
      await p.getByRole('heading', { name: 'This agent link is not valid' }).waitFor();
      expect(await p.getByText(/must be a UUID|agentId/).count()).toBe(0);
      await p.locator('main').getByRole('link', { name: 'Your agents' }).waitFor();
      await p.goto(`${fx.base}/approvals/not-a-uuid`);
      await p.getByRole('heading', { name: 'This approval link is not valid' }).waitFor();
      expect(await p.getByText(/must be a UUID|approvalId/).count()).toBe(0);
    });

    it('no identity from the sign-in proxy: says so (not "expired"), and on loopback how to name a development principal', async () => {
      const page = await fx.open('/agents', null);
      const p = page.page;
      await p.getByRole('heading', { name: 'The broker did not receive your identity' }).waitFor();
      expect(await p.getByText(/expired/i).count()).toBe(0);
      await p.getByText('development.principal', { exact: false }).first().waitFor();
      await reviewPage(page, 'error-no-identity');
      // Also at the authorization endpoint: 401 kept, the same words.
      const { page: authorize, status } = await openError(`/oauth2/authorize?client_id=${agentId}`, null);
      expect(status).toBe(401);
      await authorize.page.getByRole('heading', { name: 'The broker did not receive your identity' }).waitFor();
    });

    it('a sign-in that ends while the console is open: "Your sign-in expired", reload', async () => {
      const page = await fx.open('/agents');
      const p = page.page;
      await p.getByRole('heading', { level: 1, name: 'Agents' }).first().waitFor();
      // The proxy's session ends: every API call is now a 401; Activity asks the broker for the first time.
      await p.route(
        (url) => url.pathname.startsWith('/api/'),
        (route) =>
          route.fulfill({
            status: 401,
            contentType: 'application/json',
            body: JSON.stringify({ error: 'unauthorized', message: 'authentication required' }),
          }),
      );
      await p.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Activity' }).click();
      await p.getByRole('heading', { name: 'Your sign-in expired' }).waitFor();
      expect(await p.getByText('The broker did not receive your identity').count()).toBe(0);
    });
  });

  describe('consent as a focused page', () => {
    it('with a request: no application navigation, the account with "not you?", distinct initials, no engineer text, "Not connected" said once', async () => {
      const { path } = await pendingRequest('Mail Sorter');
      const page = await fx.open(path);
      const p = page.page;
      await p.getByRole('button', { name: /^deny/i }).waitFor();
      expect(await p.getByRole('navigation', { name: 'Console' }).count()).toBe(0);
      await p.getByText(ALICE).first().waitFor();
      await p.getByRole('button', { name: 'Not you?' }).click();
      await p.getByText(/sign out of your organisation's sign-in/i).waitFor();
      expect(await p.getByText(/^Identifier/).count()).toBe(0);
      // Mail and Calendar are not connected: said once each, beside Connect.
      expect(await p.getByText('Not connected', { exact: true }).count()).toBe(2);
      // Agent, services and person: initials in different colours.
      const colours = await p
        .locator('.logo.placeholder, .avatar.initials')
        .evaluateAll((nodes) =>
          nodes.map(
            (node) =>
              (
                globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } }
              ).getComputedStyle(node).backgroundColor,
          ),
        );
      expect(new Set(colours).size).toBeGreaterThanOrEqual(3);
      await expect.poll(() => p.title()).toBe('Allow Mail Sorter? · Agent Identity Broker');
      await reviewPage(page, 'consent-focused');
    });

    it('on a phone: Allow and Deny are within the first screen', async () => {
      const { path } = await pendingRequest('Phone Agent');
      const page = await fx.open(path, ALICE, { viewport: { width: 390, height: 844 } });
      const p = page.page;
      for (const name of [/^allow/i, /^deny/i]) {
        const button = p.getByRole('button', { name });
        await button.waitFor();
        const box = await button.boundingBox();
        expect(box, String(name)).not.toBeNull();
        expect((box?.y ?? 0) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
        expect(box?.y ?? -1).toBeGreaterThanOrEqual(0);
        // Not covered by anything: the element at its centre is the button (or inside it).
        const onTop = await button.evaluate((node) => {
          const element = node as unknown as {
            getBoundingClientRect(): { x: number; y: number; width: number; height: number };
            contains(other: unknown): boolean;
          };
          const rect = element.getBoundingClientRect();
          const hit = (
            globalThis as unknown as { document: { elementFromPoint(x: number, y: number): unknown } }
          ).document.elementFromPoint(rect.x + rect.width / 2, rect.y + rect.height / 2);
          return hit !== null && element.contains(hit);
        });
        expect(onTop, String(name)).toBe(true);
      }
    });
  });

  describe('titles, favicon, current tab, phone navigation', () => {
    it('each route has its own title and marks its tab as the current page, sub-routes included', async () => {
      const routes: [string, string, string][] = [
        ['/agents', 'Agents · Agent Identity Broker', 'Agents'],
        [`/agents/${agentId}`, 'Planner · Agent Identity Broker', 'Agents'],
        ['/connections', 'Connections · Agent Identity Broker', 'Connections'],
        ['/approvals', 'Approvals · Agent Identity Broker', 'Approvals'],
        ['/approvals/0b6a2f4e-8d1c-4f3a-9e2b-5c7d8e9f0a1b', 'Approval · Agent Identity Broker', 'Approvals'],
        ['/approvals/remembered', 'Remembered decisions · Agent Identity Broker', 'Remembered'],
        ['/activity', 'Activity · Agent Identity Broker', 'Activity'],
      ];
      const page = await fx.blank();
      const p = page.page;
      for (const [path, title, tab] of routes) {
        await p.goto(`${fx.base}${path}`);
        await expect.poll(() => p.title(), { message: path }).toBe(title);
        const nav = p.getByRole('navigation', { name: 'Console' });
        const current = await nav.locator('[aria-current="page"]').allInnerTexts();
        expect(current, path).toEqual([tab]);
      }
    });

    it('has a favicon the page links to, served with the console (200, SVG), and no 404 on load', async () => {
      const page = await fx.open('/agents');
      const href = await page.page.locator('link[rel="icon"]').getAttribute('href');
      expect(href).toBeTruthy();
      const icon = await http(new URL(href as string, fx.base).toString());
      expect(icon.status).toBe(200);
      expect(icon.headers['content-type']).toBe('image/svg+xml');
      const favicon = await page.page.request.get(new URL(href as string, fx.base).toString());
      expect(favicon.status()).toBe(200);
    });

    it('on a phone (390 px) every tab is visible without scrolling sideways', async () => {
      const page = await fx.open('/approvals/remembered', ALICE, { viewport: { width: 390, height: 844 } });
      const links = page.page.getByRole('navigation', { name: 'Console' }).getByRole('link');
      expect(await links.count()).toBe(5);
      for (const link of await links.all()) {
        const box = await link.boundingBox();
        expect(box).not.toBeNull();
        expect((box?.x ?? 0) + (box?.width ?? 0), await link.innerText()).toBeLessThanOrEqual(390);
        expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
      }
      await reviewPage(page, 'nav-phone');
    });
  });
});
