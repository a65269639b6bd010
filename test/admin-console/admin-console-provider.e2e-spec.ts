import { openConsolePage, startOidcProvider, type RecordedPage, type TestOidcProvider } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

const PERSON = 'pat@example.com';

/** What the page's clipboard holds (run in the page). */
const readClipboard = (): Promise<string> =>
  (
    globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
  ).navigator.clipboard.readText();
const CALENDAR_API = 'https://calendar.example.com/api';

/** A client the provider registered (RFC 7591 §3.2.1). */
interface RegisteredClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/**
 * A real OAuth provider (panva's oidc-provider) registered from the admin console alone: the service is made with the
 * console's forms (its endpoints discovered from the issuer), the redirect URI is COPIED from the service's page
 * (the clipboard, not computed) into the provider's client registration (RFC 7591 dynamic registration, as an admin
 * would paste it into a provider's form), the client ID and secret the provider answers go back through the
 * console's edit form, and a permission set and the agent are made in the console. Then a person allows the agent
 * and connects the service in the person's console, and the gateway's token exchange returns the provider's own
 * token for them.
 */
describe('admin console: a real provider registered from the console alone', () => {
  let fx: AdminConsoleFixture;
  let provider: TestOidcProvider;
  let serviceId: string;
  let copied: string;
  let client: RegisteredClient;
  let agentId: string;

  beforeAll(async () => {
    provider = await startOidcProvider({
      configuration: {
        features: { registration: { enabled: true }, introspection: { enabled: true } },
        scopes: ['openid', 'offline_access', 'calendar.read', 'calendar.write'],
        pkce: { required: () => true },
        issueRefreshToken: () => true,
        findAccount: (_ctx: unknown, id: string) =>
          Promise.resolve({ accountId: id, claims: () => Promise.resolve({ sub: id }) }),
      },
    });
    fx = await startAdminConsoleFixture({
      // The provider listens on loopback, which issuer discovery refuses unless allowed.
      config: { third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } } },
    });
  });

  afterAll(async () => {
    await fx?.stop();
    await provider?.stop();
  });

  it('registers the service with the console form, its endpoints discovered from the issuer', async () => {
    const recorded = await fx.open('/services/new');
    const { page } = recorded;
    await page.getByLabel('Name', { exact: true }).fill('Team Calendar');
    await page.getByLabel('Issuer URL', { exact: true }).fill(provider.issuer);
    // Not registered at the provider yet: a placeholder client ID, as the field's hint says, and no secret for now.
    await page.getByText(/Not registered there yet\? Enter a placeholder/).waitFor();
    await page.getByLabel('Client ID', { exact: true }).fill('not-registered-yet');
    await page.getByRole('radio', { name: /No secret \(public client\)/ }).check();
    await page.getByRole('button', { name: 'Add a scope' }).click();
    const scope = page.getByRole('group', { name: 'Scope 1', exact: true });
    await scope.getByLabel('Scope', { exact: true }).fill('calendar.read');
    await scope
      .getByLabel('What it lets an agent do (optional)', { exact: true })
      .fill('See your calendars and events');
    await page.getByRole('button', { name: 'Add a resource URI' }).click();
    await page.getByLabel('Resource URI 1', { exact: true }).fill(CALENDAR_API);
    await page.getByRole('button', { name: 'Register service' }).click();
    await page.getByRole('heading', { level: 1, name: 'Team Calendar' }).waitFor();
    serviceId = new URL(page.url()).pathname.split('/').pop() as string;
    const stored = (await fx.admin.get(`/api/services/${serviceId}`)).json<{
      authorization_endpoint: string;
      token_endpoint: string;
    }>();
    expect(stored.authorization_endpoint.startsWith(`${provider.issuer}/`)).toBe(true);
    expect(stored.token_endpoint.startsWith(`${provider.issuer}/`)).toBe(true);

    // The redirect URI, copied with the page's button: what the clipboard holds is what the provider gets.
    await page.getByText('Register this redirect URI at the provider').waitFor();
    await recorded.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fx.adminUrl });
    await page.getByRole('button', { name: 'Copy redirect URI' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    copied = await page.evaluate(readClipboard);
    expect(copied).toBe((await page.locator('#callback-url').textContent())?.trim());
    await reviewAdminPage(recorded, 'provider-service-registered');
  });

  it("registers the broker's client at the provider with the copied redirect URI, and its credentials through the console", async () => {
    const registration = await fetch(`${provider.issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Agent Identity Broker',
        redirect_uris: [copied],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
    });
    expect(registration.status).toBe(201);
    client = (await registration.json()) as RegisteredClient;
    expect(client.redirect_uris).toEqual([copied]);

    const recorded = await fx.open(`/services/${serviceId}`);
    const { page } = recorded;
    await page.getByLabel('Client ID', { exact: true }).fill(client.client_id);
    await page.getByRole('radio', { name: /Client secret in the Authorization header/ }).check();
    await page.getByLabel('Client secret', { exact: true }).fill(client.client_secret);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/^Saved\./).waitFor();
    expect(await page.getByLabel('Client secret', { exact: true }).inputValue()).toBe('');
    await page.getByText('Stored — leave empty to keep.', { exact: false }).waitFor();
    const stored = (await fx.admin.get(`/api/services/${serviceId}`)).json<{
      client_id: string;
      client_secret: string | null;
      token_endpoint_auth_method: string;
    }>();
    expect(stored).toMatchObject({
      client_id: client.client_id,
      client_secret: 'REDACTED',
      token_endpoint_auth_method: 'client_secret_basic',
    });
  });

  it('makes the permission set and registers the agent in the console', async () => {
    const recorded = await fx.open('/permission-sets/new');
    const { page } = recorded;
    await page.getByLabel('Name', { exact: true }).fill('Read the team calendar');
    await page.getByRole('button', { name: 'Add a service' }).click();
    const entry = page.getByRole('group', { name: 'Service 1', exact: true });
    await entry.getByLabel('Service', { exact: true }).selectOption({ label: 'Team Calendar' });
    await entry.getByRole('checkbox', { name: /calendar\.read/ }).check();
    await page.getByRole('button', { name: 'Create permission set' }).click();
    await page.getByRole('heading', { level: 1, name: 'Read the team calendar' }).waitFor();
    const setId = new URL(page.url()).pathname.split('/').pop() as string;

    // The agent, registered in the console too and assigned the set there.
    await page.goto(`${fx.adminUrl}/agents/new`);
    await page.getByRole('heading', { level: 1, name: 'New agent' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Week planner');
    await page.getByRole('checkbox', { name: /Read the team calendar/ }).check();
    await page.getByRole('button', { name: 'Register agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Week planner' }).waitFor();
    agentId = /\/agents\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
    const agent = (await fx.admin.get(`/api/agents/${agentId}`)).json<{
      permission_sets: { permission_set_id: string }[];
    }>();
    expect(agent.permission_sets.map((set) => set.permission_set_id)).toEqual([setId]);
  });

  /** oidc-provider's development interaction pages, in the browser: sign in, then consent. */
  async function passProvider(page: Page): Promise<void> {
    const origin = new URL(provider.issuer).origin;
    for (let step = 0; step < 4 && new URL(page.url()).origin === origin; step += 1) {
      const login = page.locator('input[name="login"]');
      if ((await login.count()) > 0) {
        await login.fill('pat');
        await page.locator('input[name="password"]').fill('any');
      }
      const before = page.url();
      await Promise.all([
        page.waitForURL((url) => url.toString() !== before),
        page.locator('form:has(input[name="prompt"]) [type="submit"]').first().click(),
      ]);
    }
  }

  it("a person allows the agent and connects the service in the person's console; the exchange returns the provider's token", async () => {
    const person: RecordedPage = await openConsolePage(fx.browser, { broker: fx.enduserUrl, principal: PERSON });
    const { page } = person;
    await page.goto(`${fx.enduserUrl}/agents/${agentId}`);
    await page.getByRole('heading', { level: 1, name: 'Week planner' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'Read the team calendar' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: /^allow/i }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Week planner may now act for you/ })
      .waitFor();

    await page.goto(`${fx.enduserUrl}/connections`);
    const card = page.locator('li.card', { hasText: 'Team Calendar' });
    await card.getByText('Not connected', { exact: true }).waitFor();
    await Promise.all([
      page.waitForURL((url) => url.origin === new URL(provider.issuer).origin),
      card.getByRole('link', { name: 'Connect Team Calendar' }).click(),
    ]);
    // The provider accepted the broker's redirect_uri: the one registered from the page.
    await passProvider(page);
    await page.waitForURL(`${fx.enduserUrl}/connections`);
    await page.getByText('Team Calendar is connected.').waitFor();
    expect(person.pageErrors).toEqual([]);

    const { response } = await fx.gateway.exchange(PERSON, agentId, { resource: CALENDAR_API });
    expect(response.status, response.text).toBe(200);
    const exchanged = response.json<{ access_token: string; issued_token_type: string }>();
    expect(exchanged.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    // The provider's own access token, issued to the client registered with the copied redirect URI.
    const introspection = await fetch(`${provider.issuer}/token/introspection`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: exchanged.access_token }),
    });
    const active = (await introspection.json()) as {
      active: boolean;
      client_id?: string;
      scope?: string;
      sub?: string;
    };
    expect(active).toMatchObject({ active: true, client_id: client.client_id, sub: 'pat' });
    expect(active.scope?.split(' ')).toContain('calendar.read');
  });
});
