import {
  ApiClient,
  axeViolations,
  describeViolations,
  FrozenClock,
  launchBrowser,
  openConsolePage,
  screenshots,
  startGatewayFixture,
  startThirdPartyProvider,
  type GatewayFixture,
  type RecordedPage,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { adminCreated } from './registry-fixture';
import { BOTH_SERVERS } from './servers';

export const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';

/**
 * One real broker (both servers, local mode, in-memory PGlite) whose consent_ui_url is its own
 * public URL, so it serves the built console (dist/console); a gateway trusted for approvals;
 * optionally oidc-provider as a third party with one registered service; one headless Chromium.
 */
export interface ConsoleFixture {
  readonly gateway: GatewayFixture;
  readonly broker: TestBroker;
  /** The end-user server's origin: the console's and the API's. */
  readonly base: string;
  readonly admin: ApiClient;
  readonly browser: Browser;
  readonly clock: FrozenClock;
  /** The third party (when asked for) and the service registered for it. */
  readonly provider?: ThirdPartyProvider;
  readonly serviceId?: string;
  /** A recorded page signed in as `principal` (null: no principal header), already at `path` once the console has rendered. */
  open(
    path: string,
    principal?: string | null,
    options?: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } },
  ): Promise<RecordedPage>;
  /** A recorded page signed in as `principal`, not yet navigated anywhere. */
  blank(principal?: string | null): Promise<RecordedPage>;
  stop(): Promise<void>;
}

export async function startConsoleFixture(
  options: {
    thirdParty?: boolean;
    /** Configuration over the fixture's own: a top-level section given here replaces the fixture's. */
    config?: Record<string, unknown>;
  } = {},
): Promise<ConsoleFixture> {
  const browser = await launchBrowser();
  const clock = new FrozenClock(new Date());
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    clock,
    config: {
      // The test provider listens on loopback, which issuer discovery refuses unless allowed.
      third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
      log: { level: 'warn' },
      ...options.config,
    },
  });
  const { broker, base } = gateway;
  const admin = new ApiClient(broker.url('admin'));
  let provider: ThirdPartyProvider | undefined;
  let serviceId: string | undefined;
  if (options.thirdParty) {
    // The callback URL contains the service id: the service is registered first, the provider learns it after.
    const placeholder = 'https://placeholder.example.com';
    serviceId = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'pending',
        client_secret: 'pending',
        issuer_uri: placeholder,
        authorization_endpoint: `${placeholder}/a`,
        token_endpoint: `${placeholder}/t`,
        scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
        protected_resources: ['https://mail.example.com/api'],
      })
    ).json<{ id: string }>().id;
    provider = await startThirdPartyProvider({
      redirectUris: [`${base}/api/third-party/${serviceId}/oauth2/callback`],
      scopes: ['mail.read', 'mail.send'],
    });
    const put = await admin.put(`/api/services/${serviceId}`, {
      display_name: 'Mail',
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      issuer_uri: provider.issuer,
      scopes: [
        { scope: 'mail.read', description: 'Read your mail' },
        { scope: 'mail.send', description: 'Send mail as you' },
      ],
      protected_resources: ['https://mail.example.com/api'],
    });
    expect(put.status, put.text).toBe(200);
  }
  return {
    gateway,
    broker,
    base,
    admin,
    browser,
    clock,
    provider,
    serviceId,
    blank: (principal = ALICE) => openConsolePage(browser, { broker: base, principal }),
    async open(path, principal = ALICE, pageOptions = {}) {
      const recorded = await openConsolePage(browser, { broker: base, principal, ...pageOptions });
      const response = await recorded.page.goto(`${base}${path}`);
      expect(response?.status(), `GET ${path}`).toBe(200);
      // The console has rendered once the layout's main landmark is there.
      await recorded.page.locator('main').first().waitFor();
      return recorded;
    },
    async stop() {
      await browser.close().catch(() => undefined);
      await gateway.stop();
      await provider?.stop();
    },
  };
}

/** axe-core in the page: no violation of any impact (best practices included). */
export async function expectAccessible(recorded: RecordedPage, what: string): Promise<void> {
  const violations = await axeViolations(recorded.page);
  expect(violations, `${what}: axe-core violations\n${describeViolations(violations)}`).toEqual([]);
}

/** Screenshots (light, dark, 375 px) and the accessibility check of the page as it is now. */
export async function reviewPage(recorded: RecordedPage, name: string): Promise<void> {
  await expectAccessible(recorded, name);
  await screenshots(recorded.page, name);
}

export { adminCreated };

/**
 * A service at an identity provider these tests never reach (the consent page only names it and its
 * scope): `name`, its `client_id`, one described scope, one protected resource. Its id.
 */
export function placeholderService(
  admin: ApiClient,
  service: { name: string; clientId: string; scope: string; description: string; resource: string },
): Promise<string> {
  const idp = 'https://idp.example.com';
  return adminCreated(admin, '/api/services', {
    display_name: service.name,
    client_id: service.clientId,
    issuer_uri: idp,
    authorization_endpoint: `${idp}/a`,
    token_endpoint: `${idp}/t`,
    scopes: [{ scope: service.scope, description: service.description }],
    protected_resources: [service.resource],
  });
}

/** The "Mail" service of the consent tests (`mail.read`, read your mail). */
export const PLACEHOLDER_MAIL = {
  name: 'Mail',
  clientId: 'm',
  scope: 'mail.read',
  description: 'Read your mail',
  resource: 'https://mail.example.com',
} as const;
