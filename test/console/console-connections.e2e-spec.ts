import { createHash } from 'node:crypto';
import { freePort, http, type RecordedPage } from '@broker/testing';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

/**
 * in a real Chromium: connect a service from /connections through
 * oidc-provider's own login and consent pages, see it connected, Refresh, Disconnect after
 * seeing the affected agents; a failed callback's message. Connect from a consent page that
 * fails (the person cancels, the token endpoint is down): back on the consent page with the
 * reason, the request still answerable.
 */
describe('console: connections in a browser', () => {
  let fx: ConsoleFixture;
  let serviceId: string;
  // Pages close with the fixture's browser.
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture({ thirdParty: true });
    serviceId = fx.serviceId as string;
    const set = (
      await fx.admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    const agent = (
      await fx.admin.post('/api/agents', { display_name: 'Mail Agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
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

  /** The person at oidc-provider's interaction pages: signs in, then consents, until the broker's origin again. */
  async function signInAtProvider(page: Page): Promise<void> {
    const provider = new URL(fx.provider?.issuer as string).origin;
    await page.waitForURL((url) => url.origin === provider);
    for (let step = 0; step < 4 && new URL(page.url()).origin === provider; step++) {
      const login = page.locator('input[name="login"]');
      if ((await login.count()) > 0) {
        await login.fill('provider-user');
        await page.locator('input[name="password"]').fill('any');
      }
      const before = page.url();
      await page.locator('button[type="submit"]').first().click();
      await page.waitForURL((url) => url.toString() !== before);
      await page.waitForLoadState();
    }
    await page.waitForURL((url) => url.origin === fx.base);
  }

  const session = () =>
    http(`${fx.base}/api/third-party/${serviceId}/session`, { headers: { 'x-remote-user': ALICE } });

  it("connects through the provider's login, shows it connected, refreshes, and disconnects after listing the affected agents", async () => {
    const page = await open('/connections');
    const p = page.page;
    const mail = p.getByRole('listitem').filter({ hasText: 'Mail' }).first();
    await mail.waitFor();
    await reviewPage(page, 'connections-not-connected');

    await mail
      .getByRole('button', { name: /^connect/i })
      .or(mail.getByRole('link', { name: /^connect/i }))
      .first()
      .click();
    await signInAtProvider(p);
    // Back on the connections page with the broker's confirmation.
    await p.waitForURL((url) => url.pathname === '/connections');
    await expect.poll(() => p.getByText(/connected/i).count()).toBeGreaterThan(0);
    expect((await session()).status).toBe(200);
    await reviewPage(page, 'connections-connected');
    // Refresh and Reconnect keep the connection, Disconnect takes it away: in that order, each with what it does.
    const actions = mail.getByRole('group', { name: 'Manage Mail' });
    const controls = await actions.locator('button:visible, a:visible').all();
    expect(await Promise.all(controls.map((control) => control.getAttribute('aria-label')))).toEqual([
      'Refresh Mail',
      'Reconnect Mail',
      'Disconnect Mail',
    ]);
    const described = async (name: string): Promise<string> => {
      const id = await actions.getByLabel(name, { exact: true }).getAttribute('aria-describedby');
      return (await p.locator(`[id="${id}"]`).innerText()).trim();
    };
    expect(await described('Refresh Mail')).toMatch(/^Gets a new access token now/);
    expect(await described('Reconnect Mail')).toMatch(/^Takes you to Mail to sign in again/);
    expect(await described('Disconnect Mail')).toMatch(
      /^Deletes the tokens the broker holds for Mail\. Agents that use it lose access/,
    );

    const before = fx.provider?.refreshes() ?? 0;
    await mail.getByRole('button', { name: /refresh/i }).click();
    await expect.poll(() => fx.provider?.refreshes()).toBe(before + 1);

    await mail.getByRole('button', { name: /^disconnect/i }).click();
    const dialog = p.getByRole('dialog');
    await dialog.waitFor();
    // The affected agents are listed before the person confirms.
    await dialog.getByText('Mail Agent').waitFor();
    await reviewPage(page, 'connections-disconnect');
    await dialog.getByRole('button', { name: /disconnect/i }).click();
    await expect.poll(async () => (await session()).status).toBe(404);
    await mail
      .getByRole('button', { name: /^connect/i })
      .or(mail.getByRole('link', { name: /^connect/i }))
      .first()
      .waitFor();
    expect(page.pageErrors).toEqual([]);
    expect(page.dialogs).toEqual([]);
  });

  it("a failed callback: only the broker's words for its code, never the error_description of the address", async () => {
    const description =
      'Your account is locked: call +1 555 0100 and read out your password <img src=x onerror=alert(1)>';
    const page = await open(`/connections?error=invalid_state&error_description=${encodeURIComponent(description)}`);
    const p = page.page;
    const alert = p.getByRole('alert').filter({ hasText: 'Connecting failed.' }).first();
    await alert.getByText('The connection link was invalid or had expired.', { exact: false }).waitFor();
    expect(await p.locator('main').textContent()).not.toContain('call +1 555 0100');
    // The code is a small secondary line, never the sentence itself.
    expect(await alert.locator('.notice-details').textContent()).toBe('Details: invalid_state');
    expect(await alert.textContent()).not.toContain('(code:');
    expect(await p.locator('main img').count()).toBe(0);
    expect(page.dialogs).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
    await reviewPage(page, 'connections-error');
  });

  describe('Connect from the consent page fails: back on the consent page, the request intact', () => {
    const REDIRECT = 'https://planner.example.com/cb';
    let agentId: string;

    beforeAll(async () => {
      const set = (
        await fx.admin.post('/api/permission-sets', {
          name: 'Planner mail',
          service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
        })
      ).json<{ id: string }>().id;
      const created = await fx.admin.post('/api/agents', {
        display_name: 'Planner',
        redirect_uris: [REDIRECT],
        permission_sets: [{ permission_set_id: set }],
      });
      expect(created.status, created.text).toBe(201);
      agentId = created.json<{ id: string }>().id;
    });

    /** Planner's authorization request in Alice's browser, landed on the consent page; the agent's redirect_uri answered here and recorded. */
    async function atConsent(state: string): Promise<{ page: RecordedPage; landed: Promise<Request> }> {
      const page = await fx.blank(ALICE);
      await page.context.route(`${REDIRECT}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/plain', body: 'agent callback' }),
      );
      const landed = page.page.waitForRequest((request) => request.url().startsWith(REDIRECT), { timeout: 20_000 });
      landed.catch(() => undefined); // awaited by the test
      const url = new URL('/oauth2/authorize', fx.base);
      const challenge = createHash('sha256')
        .update('planner-verifier-0123456789-0123456789-0123456789')
        .digest('base64url');
      for (const [k, v] of Object.entries({
        client_id: agentId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      await page.page.goto(url.toString());
      await page.page.waitForURL((u) => u.pathname === `/agents/${agentId}`);
      await page.page.getByRole('button', { name: /^deny/i }).waitFor();
      return { page, landed };
    }

    const connectLink = (p: Page) =>
      p.getByRole('region', { name: 'Third-party accounts' }).getByRole('link', { name: /^connect/i });

    it('the person cancels at the provider: the reason beside the service, and Deny still answers the agent', async () => {
      const { page, landed } = await atConsent('cancel-state');
      const p = page.page;
      await connectLink(p).click();
      const provider = new URL(fx.provider?.issuer as string).origin;
      await p.waitForURL((url) => url.origin === provider);
      await p
        .getByRole('link', { name: /cancel/i })
        .first()
        .click();
      await p.waitForURL((url) => url.origin === fx.base && url.pathname === `/agents/${agentId}`);
      const alert = p.getByRole('alert').filter({ hasText: 'Connecting Mail failed.' });
      await alert.waitFor();
      expect(await alert.textContent()).toContain('The connection was cancelled at Mail');
      expect(await alert.locator('.notice-details').textContent()).toBe('Details: access_denied');
      // The callback's parameters left the address bar (only the request's mark stays); the request is still there to answer.
      expect(new URL(p.url()).search).toBe('?request=1');
      await p.getByRole('button', { name: /^allow/i }).waitFor();
      await reviewPage(page, 'consent-connect-cancelled');
      await p.getByRole('button', { name: /^deny/i }).click();
      const callback = new URL((await landed).url());
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('state')).toBe('cancel-state');
      expect(page.unexpectedErrors()).toEqual([]);
    });

    it('the provider\'s token endpoint is unreachable: "Mail could not be reached", and Allow still gives the agent its code', async () => {
      const issuer = fx.provider?.issuer as string;
      const closed = await freePort();
      const body = {
        display_name: 'Mail',
        client_id: fx.provider?.clientId,
        client_secret: fx.provider?.clientSecret,
        issuer_uri: issuer,
        scopes: [
          { scope: 'mail.read', description: 'Read your mail' },
          { scope: 'mail.send', description: 'Send mail as you' },
        ],
        protected_resources: ['https://mail.example.com/api'],
      };
      const down = await fx.admin.put(`/api/services/${serviceId}`, {
        ...body,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `http://127.0.0.1:${closed}/token`,
      });
      expect(down.status, down.text).toBe(200);
      try {
        const { page, landed } = await atConsent('unreachable-state');
        const p = page.page;
        await connectLink(p).click();
        await signInAtProvider(p);
        await p.waitForURL((url) => url.pathname === `/agents/${agentId}`);
        const alert = p.getByRole('alert').filter({ hasText: 'Connecting Mail failed.' });
        await alert.waitFor();
        const text = await alert.textContent();
        expect(text).toContain('Mail could not be reached');
        expect(text).not.toContain('refused');
        expect(await alert.locator('.notice-details').textContent()).toBe('Details: provider_unreachable');
        expect((await session()).status).toBe(404);
        await reviewPage(page, 'consent-connect-unreachable');
        await p.getByRole('button', { name: /^allow/i }).click();
        const callback = new URL((await landed).url());
        expect(callback.searchParams.get('code')).toBeTruthy();
        expect(callback.searchParams.get('state')).toBe('unreachable-state');
      } finally {
        const restored = await fx.admin.put(`/api/services/${serviceId}`, body);
        expect(restored.status, restored.text).toBe(200);
      }
    });
  });

  it('a failed Connect started here names the service and says why: unreachable is not "refused"', async () => {
    const page = await open(`/connections?error=provider_unreachable&error_description=x&service_id=${serviceId}`);
    const alert = page.page.getByRole('alert').filter({ hasText: 'Connecting Mail failed.' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Mail could not be reached');
    expect(await alert.textContent()).not.toContain('refused');
    expect(await alert.locator('.notice-details').textContent()).toBe('Details: provider_unreachable');
  });

  it('a failed callback with a code the broker does not know: a general sentence, neither the code nor the description', async () => {
    const code = 'Call_support_at_555_0100';
    const page = await open(
      `/connections?error=${code}&error_description=${encodeURIComponent('Your session expired: sign in again at https://evil.example.com')}`,
    );
    const p = page.page;
    const alert = p.getByRole('alert').filter({ hasText: 'Connecting failed.' }).first();
    await alert.waitFor();
    const main = await p.locator('main').textContent();
    expect(main).not.toContain('evil.example.com');
    expect(main).not.toContain('Your session expired');
    expect(main).not.toContain(code);
    expect(await alert.textContent()).toContain('The provider reported an error.');
    expect(page.unexpectedErrors()).toEqual([]);
  });
});
