import { resolve } from 'node:path';
import { http, SCREENSHOT_DIR, type RecordedPage } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALICE,
  BOB,
  adminCreated,
  reviewPage,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-fixture';

const CAROL = 'carol@example.com';
const MAIL_API = 'https://mail.example.com/api';
const MINUTE = 60_000;

/** The refusal's link (RFC 8693 exchange refused, with the request the person answers). */
interface Refusal {
  readonly error: string;
  readonly authorization_request?: { id: string; url: string; expires_at: string; expires_in: number };
}

/**
 * The page a refused token exchange links to, in a real Chromium against the real API: each request is made by a
 * gateway's exchange the broker refuses (no grant, a grant without the asked scope, no connection), then answered the
 * way a person does, by role and label and with the keyboard: allow and connect at the test OAuth provider (Done, and
 * the gateway's next exchange succeeds), deny, cancel at the provider, someone else's link, expired (while open, and
 * opened late), used, not valid, answered in another tab. Every state is reviewed (axe, light, dark, 390 px) and
 * also shot at 375 px, the narrowest phone the page is made for.
 */
describe('console: an authorization request in a browser', () => {
  let fx: ConsoleFixture;
  let serviceId: string;
  let readSet: string;
  let sendSet: string;
  const pages: RecordedPage[] = [];

  beforeAll(async () => {
    fx = await startConsoleFixture({ thirdParty: true });
    serviceId = fx.serviceId as string;
    readSet = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Read mail',
      service_scopes: [{ service_id: serviceId, scopes: ['mail.read'] }],
    });
    sendSet = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Send mail',
      service_scopes: [{ service_id: serviceId, scopes: ['mail.send'] }],
    });
  });

  afterAll(async () => {
    await fx?.stop();
  });

  /** An agent that may be allowed to read mail (and, with `send`, to send it: an optional set). */
  const agent = (name: string, send = false): Promise<string> =>
    adminCreated(fx.admin, '/api/agents', {
      display_name: name,
      description: `${name} plans trips and books them for you.`,
      permission_sets: [
        { permission_set_id: readSet },
        ...(send ? [{ permission_set_id: sendSet, requirement_type: 'optional' }] : []),
      ],
    });

  /** The gateway's exchange for `principal` through `agentId`, refused with a link: the link's path and id. */
  async function refused(principal: string, agentId: string, scope?: string): Promise<{ path: string; id: string }> {
    const { response } = await fx.gateway.exchange(principal, agentId, {
      resource: MAIL_API,
      ...(scope === undefined ? {} : { fields: { scope } }),
    });
    expect([400, 403], response.text).toContain(response.status);
    const request = response.json<Refusal>().authorization_request;
    expect(request, response.text).toBeDefined();
    const url = new URL(request?.url as string);
    expect(url.origin).toBe(fx.base);
    expect(url.pathname).toBe(`/authorization-requests/${request?.id}`);
    return { path: url.pathname, id: request?.id as string };
  }

  const exchangeStatus = async (principal: string, agentId: string): Promise<number> =>
    (await fx.gateway.exchange(principal, agentId, { resource: MAIL_API })).response.status;

  async function open(path: string, principal = ALICE): Promise<RecordedPage> {
    const page = await fx.open(path, principal);
    pages.push(page);
    return page;
  }

  /** The element that has focus, by its text, or a field by its label (the tests have no DOM types). */
  const focused = (p: Page): Promise<string | undefined> =>
    p.evaluate(() => {
      interface Focused {
        textContent: string | null;
        labels?: { textContent: string | null }[] | null;
      }
      const { document } = globalThis as unknown as { document: { activeElement: Focused | null } };
      const element = document.activeElement;
      const label = element?.labels?.[0]?.textContent ?? element?.textContent;
      return label?.trim() ?? undefined;
    });

  /** The state's heading is there and has focus (a screen reader reads out the new state). */
  async function atHeading(p: Page, name: string): Promise<void> {
    await p.getByRole('heading', { level: 1, name, exact: true }).waitFor();
    await expect.poll(() => focused(p)).toBe(name);
  }

  /** reviewPage, and the page at 375 px as well (the fixture's phone is 390 px wide). */
  async function review(page: RecordedPage, name: string): Promise<void> {
    await reviewPage(page, name);
    const p = page.page;
    const before = p.viewportSize() ?? { width: 1280, height: 720 };
    await p.setViewportSize({ width: 375, height: 812 });
    // Nothing wider than the phone: no sideways scrolling.
    const width = await p.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    expect(width, `${name}: page width at 375 px`).toBeLessThanOrEqual(375);
    await p.screenshot({ path: resolve(SCREENSHOT_DIR, `${name}-375.png`), fullPage: true, animations: 'disabled' });
    await p.setViewportSize(before);
  }

  /** The person at oidc-provider's interaction pages: signs in, then consents, until the broker's origin again. */
  async function signInAtProvider(p: Page): Promise<void> {
    const provider = new URL(fx.provider?.issuer as string).origin;
    await p.waitForURL((url) => url.origin === provider);
    for (let step = 0; step < 4 && new URL(p.url()).origin === provider; step++) {
      const login = p.locator('input[name="login"]');
      if ((await login.count()) > 0) {
        await login.fill('provider-user');
        await p.locator('input[name="password"]').fill('any');
      }
      const before = p.url();
      await p.locator('button[type="submit"]').first().click();
      await p.waitForURL((url) => url.toString() !== before);
      await p.waitForLoadState();
    }
    await p.waitForURL((url) => url.origin === fx.base);
  }

  /** Tab (at most `limit` times) until the control named `name` has focus. */
  async function tabTo(p: Page, name: string, limit = 40): Promise<void> {
    for (let i = 0; i < limit; i++) {
      if ((await focused(p)) === name) return;
      await p.keyboard.press('Tab');
    }
    expect(await focused(p), `Tab never reached ${name}`).toBe(name);
  }

  const grantOf = async (principal: string, agentId: string) =>
    (await http(`${fx.base}/api/consent/agents/${agentId}/grants`, { headers: { 'x-remote-user': principal } })).json<{
      data: { valid_until: string | null; granted_permission_sets: Record<string, string[]> }[];
    }>().data[0];

  const gatewayState = async (id: string): Promise<string> =>
    (
      await http(`${fx.base}/api/authorization-requests/${id}/state`, {
        headers: { 'x-client-assertion': await fx.gateway.assertion() },
      })
    ).json<{ data: { status: string } }>().data.status;

  it('Alice allows with the keyboard, connects Mail at the provider, sees Done; the gateway then gets its token; the link again says it was used', async () => {
    const planner = await agent('Trip Planner');
    const { path, id } = await refused(ALICE, planner);
    const page = await open(path);
    const p = page.page;
    await atHeading(p, 'Trip Planner asks for access to Mail');
    expect(await p.title()).toBe('Allow Trip Planner? · Agent Identity Broker');
    await p.getByText('Read your mail').waitFor();
    await p.getByText('Trip Planner plans trips and books them for you.').waitFor();
    await p.getByText(/after you allow, you connect it/).waitFor();
    // A focused page: no console navigation around the decision.
    expect(await p.getByRole('navigation', { name: 'Console' }).count()).toBe(0);
    await review(page, 'authorization-request-consent');

    // The keyboard only: one day instead of the default 30, then Allow.
    await tabTo(p, '30 days');
    await p.keyboard.press('ArrowLeft');
    expect(await p.getByRole('radio', { name: '1 day' }).isChecked()).toBe(true);
    await tabTo(p, 'Allow');
    await p.keyboard.press('Enter');

    await atHeading(p, 'Connect Mail');
    await p.getByText('You allowed Trip Planner to use Mail.', { exact: false }).waitFor();
    const grant = await grantOf(ALICE, planner);
    expect(Object.keys(grant?.granted_permission_sets ?? {})).toEqual([readSet]);
    const until = Date.parse(grant?.valid_until ?? '') - fx.clock.now().getTime();
    expect(until).toBeGreaterThan(23 * 60 * MINUTE);
    expect(until).toBeLessThanOrEqual(25 * 60 * MINUTE);
    expect(await gatewayState(id)).toBe('pending');
    await review(page, 'authorization-request-connect');

    // Reload: the request is the broker's, so the step is still there.
    await p.reload();
    await atHeading(p, 'Connect Mail');

    await p.getByRole('link', { name: 'Connect Mail' }).click();
    await signInAtProvider(p);
    await p.waitForURL((url) => url.pathname === path);
    await atHeading(p, 'Done — you can return to Trip Planner');
    expect(await p.title()).toBe('Done · Agent Identity Broker');
    // The callback's parameters left the address bar.
    await expect.poll(() => new URL(p.url()).search).toBe('');
    expect(await gatewayState(id)).toBe('completed');
    expect(await exchangeStatus(ALICE, planner)).toBe(200);
    await review(page, 'authorization-request-done');

    await p.reload();
    await atHeading(p, 'This link was already used');
    await p.getByText(/Trip Planner asked for access to Mail, and you allowed it on /).waitFor();
    expect(await p.getByRole('button', { name: /allow|deny/i }).count()).toBe(0);
    await review(page, 'authorization-request-used');
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('more of an existing grant: no expiry to choose, and Allow is Done at once with the connection already there', async () => {
    const assistant = await agent('Mail Assistant', true);
    const allowed = await http(`${fx.base}/api/consent/agents/${assistant}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': ALICE, 'content-type': 'application/json', origin: fx.base },
      body: JSON.stringify({
        granted_permission_sets: { [readSet]: [serviceId] },
        valid_until: new Date(fx.clock.now().getTime() + 7 * 24 * 60 * MINUTE).toISOString(),
      }),
    });
    expect(allowed.status, allowed.text).toBe(201);
    const before = (await grantOf(ALICE, assistant))?.valid_until;
    const { path } = await refused(ALICE, assistant, 'mail.send');
    const page = await open(path);
    const p = page.page;
    await atHeading(p, 'Mail Assistant asks for access to Mail');
    await p.getByText('Send mail as you').waitFor();
    await p.getByText(/already has access you gave it/).waitFor();
    expect(await p.getByRole('radio').count()).toBe(0);
    await review(page, 'authorization-request-more');
    await p.getByRole('button', { name: 'Allow' }).click();
    await atHeading(p, 'Done — you can return to Mail Assistant');
    const grant = await grantOf(ALICE, assistant);
    expect(Object.keys(grant?.granted_permission_sets ?? {}).sort()).toEqual([readSet, sendSet].sort());
    expect(grant?.valid_until).toBe(before);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('allowed before, but no connection: straight to Connect Mail, and Done once connected, the grant unchanged', async () => {
    const DAVE = 'dave@example.com';
    const helper = await agent('Inbox Helper');
    const allowed = await http(`${fx.base}/api/consent/agents/${helper}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': DAVE, 'content-type': 'application/json', origin: fx.base },
      body: JSON.stringify({ granted_permission_sets: { [readSet]: [serviceId] } }),
    });
    expect(allowed.status, allowed.text).toBe(201);
    const before = await grantOf(DAVE, helper);
    const { path } = await refused(DAVE, helper);
    const page = await open(path, DAVE);
    const p = page.page;
    await atHeading(p, 'Connect Mail');
    await p.getByText('Inbox Helper may use Mail. One step is left before it can.').waitFor();
    expect(await p.getByRole('button', { name: /allow|deny/i }).count()).toBe(0);
    await review(page, 'authorization-request-connection-only');
    await p.getByRole('link', { name: 'Connect Mail' }).click();
    await signInAtProvider(p);
    await atHeading(p, 'Done — you can return to Inbox Helper');
    expect(await grantOf(DAVE, helper)).toEqual(before);
    expect(await exchangeStatus(DAVE, helper)).toBe(200);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('Deny is confirmed first, says what happened, and the link again says it was denied', async () => {
    const scout = await agent('Scout');
    const { path } = await refused(ALICE, scout);
    const page = await open(path);
    const p = page.page;
    await atHeading(p, 'Scout asks for access to Mail');
    await p.getByRole('button', { name: 'Deny' }).click();
    const dialog = p.getByRole('dialog', { name: 'Deny Scout access to Mail?' });
    await dialog.waitFor();
    await review(page, 'authorization-request-deny-dialog');
    // Escape cancels: still pending.
    await p.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await p.getByRole('button', { name: 'Deny' }).click();
    await dialog.getByRole('button', { name: 'Deny' }).click();
    await atHeading(p, 'You denied Scout access to Mail');
    expect(await grantOf(ALICE, scout)).toBeUndefined();
    await review(page, 'authorization-request-denied');
    await p.reload();
    await atHeading(p, 'This link was already used');
    await p.getByText(/Scout asked for access to Mail, and you denied it on /).waitFor();
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('answered in another tab: Allow here reads the request again and says the link was used', async () => {
    const courier = await agent('Courier');
    const { path } = await refused(ALICE, courier);
    const first = await open(path);
    const second = await open(path);
    await atHeading(first.page, 'Courier asks for access to Mail');
    await atHeading(second.page, 'Courier asks for access to Mail');
    await first.page.getByRole('button', { name: 'Deny' }).click();
    await first.page.getByRole('dialog').getByRole('button', { name: 'Deny' }).click();
    await atHeading(first.page, 'You denied Courier access to Mail');
    await second.page.getByRole('button', { name: 'Allow' }).click();
    await atHeading(second.page, 'This link was already used');
    await second.page.getByText(/you denied it on /).waitFor();
    expect(await grantOf(ALICE, courier)).toBeUndefined();
  });

  it("Bob cancels at the provider: the reason in the console's words and Connect Mail again; Alice opening Bob's link is told it is someone else's", async () => {
    const planner = await agent('Bob Planner');
    const { path } = await refused(BOB, planner);
    const page = await open(path, BOB);
    const p = page.page;
    await atHeading(p, 'Bob Planner asks for access to Mail');
    await p.getByRole('button', { name: 'Allow' }).click();
    await atHeading(p, 'Connect Mail');
    await p.getByRole('link', { name: 'Connect Mail' }).click();
    const provider = new URL(fx.provider?.issuer as string).origin;
    await p.waitForURL((url) => url.origin === provider);
    await p
      .getByRole('link', { name: /cancel/i })
      .first()
      .click();
    await p.waitForURL((url) => url.origin === fx.base && url.pathname === path);
    await atHeading(p, 'Connect Mail');
    const alert = p.getByRole('alert').filter({ hasText: 'Connecting Mail failed.' });
    await alert.getByText(/The connection was cancelled at Mail/).waitFor();
    await expect.poll(() => new URL(p.url()).search).toBe('');
    await p.getByRole('link', { name: 'Connect Mail again' }).waitFor();
    await review(page, 'authorization-request-connect-failed');

    // The same link in Alice's browser: nothing to do, and who she is.
    const alice = await open(path, ALICE);
    await atHeading(alice.page, 'This link is for someone else');
    expect(await alice.page.title()).toBe('This link is for someone else · Agent Identity Broker');
    await alice.page.getByText(ALICE, { exact: true }).first().waitFor();
    expect(await alice.page.getByRole('button', { name: /allow|deny/i }).count()).toBe(0);
    await review(alice, 'authorization-request-someone-else');
    // Bob's request is untouched.
    await p.reload();
    await atHeading(p, 'Connect Mail');
  });

  it('a page left open past its expiry: the decision goes and "This link has expired" takes focus', async () => {
    const late = await agent('Late Agent');
    const { path } = await refused(CAROL, late);
    const page = await fx.blank(CAROL);
    pages.push(page);
    const p = page.page;
    await p.clock.install();
    await p.goto(`${fx.base}${path}`);
    await atHeading(p, 'Late Agent asks for access to Mail');
    fx.clock.advance(11 * MINUTE);
    await p.clock.fastForward(11 * MINUTE);
    await atHeading(p, 'This link has expired');
    expect(await p.getByRole('button', { name: /allow|deny/i }).count()).toBe(0);
    await p.getByText(/Ask Late Agent again/).waitFor();
    await review(page, 'authorization-request-expired');
    // Opened again later: the broker says expired too.
    await p.reload();
    await atHeading(p, 'This link has expired');
  });

  it('Allow after the broker ended the request (the page did not know yet): nothing is granted, and the page says it expired', async () => {
    const slow = await agent('Slow Agent');
    const { path } = await refused(CAROL, slow);
    const page = await open(path, CAROL);
    const p = page.page;
    await atHeading(p, 'Slow Agent asks for access to Mail');
    fx.clock.advance(11 * MINUTE);
    await p.getByRole('button', { name: 'Allow' }).click();
    await atHeading(p, 'This link has expired');
    expect(await grantOf(CAROL, slow)).toBeUndefined();
  });

  it('a link that is not valid: cut short, mistyped, or naming no request', async () => {
    const page = await open('/authorization-requests/6f1c2a7e-0b9d-4c44-9d3e');
    await atHeading(page.page, 'This link is not valid');
    await review(page, 'authorization-request-invalid');
    const unknown = await open('/authorization-requests/6f1c2a7e-0b9d-4c44-9d3e-2f9f1d7c1a55');
    await atHeading(unknown.page, 'This link is not valid');
    expect(unknown.unexpectedErrors()).toEqual([]);
  });

  it('the activity tells each step in words: asked, allowed, denied, expired, and the link opened by someone else', async () => {
    const alice = await open('/activity');
    const a = alice.page;
    await a.getByRole('heading', { name: 'Trip Planner asked for access to Mail' }).first().waitFor();
    await a.getByRole('heading', { name: 'You allowed Trip Planner access to Mail' }).first().waitFor();
    await a.getByRole('heading', { name: 'You denied Scout access to Mail' }).first().waitFor();
    await reviewPage(alice, 'authorization-request-activity');
    const bob = await open('/activity', BOB);
    const misdirected = bob.page.getByRole('listitem').filter({
      has: bob.page.getByRole('heading', {
        name: "Someone else (alice@example.com) opened your link for Bob Planner's access to Mail",
      }),
    });
    await misdirected.getByText('Refused', { exact: true }).waitFor();
    await reviewPage(bob, 'authorization-request-activity-misdirected');
    const carol = await open('/activity', CAROL);
    await carol.page
      .getByRole('heading', { name: "The link for Late Agent's access to Mail expired" })
      .first()
      .waitFor();
    for (const page of [alice, bob, carol]) expect(page.unexpectedErrors()).toEqual([]);
  });
});
