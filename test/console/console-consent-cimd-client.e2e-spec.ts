import { AuthorizationSessionTokens } from '@broker/oauth-server';
import { http } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminCreated,
  ALICE,
  BOB,
  PLACEHOLDER_MAIL,
  placeholderService,
  reviewPage,
  startConsoleFixture,
  type ConsoleFixture,
} from '../support/console-fixture';

const CLIENT = 'https://tenant-b.example.com/oauth/client.json';
const REDIRECT = 'https://tenant-b.example.com/cb';

/**
 * The consent page of a Client ID Metadata Document client names the client (its document
 * URL and verified domain) and the host it returns to; when the person allowed the agent
 * before, through another client, it says this client is new (consent is remembered per
 * client document URL and redirect host).
 */
describe('console: the consent page of a document client', () => {
  let fx: ConsoleFixture;
  let agentId: string;

  async function sessionToken(principal: string): Promise<string> {
    const sessions = fx.broker.broker.server('enduser').app.get(AuthorizationSessionTokens);
    const original = new URL(`${fx.base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({
      client_id: CLIENT,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }))
      original.searchParams.set(k, v);
    return sessions.issue({
      agentId,
      principal,
      originalUrl: original.toString(),
      cimd: {
        client_id_url: CLIENT,
        redirect_uri: REDIRECT,
        verified_domain: 'tenant-b.example.com',
        requested_scopes: ['mail.read'],
        logo_uri: null,
      },
    });
  }

  beforeAll(async () => {
    fx = await startConsoleFixture();
    const mail = await placeholderService(fx.admin, { ...PLACEHOLDER_MAIL, clientId: 'mail' });
    const set = await adminCreated(fx.admin, '/api/permission-sets', {
      name: 'Read mail',
      service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
    });
    agentId = await adminCreated(fx.admin, '/api/agents', {
      display_name: 'Tenant Agent',
      client_uris: ['https://tenant-a.example.com/oauth/client.json', 'https://tenant-b.example.com/oauth/client.json'],
      permission_sets: [{ permission_set_id: set }],
    });
    // Alice allowed the agent before (through the console: no client named).
    const granted = await http(`${fx.base}/api/consent/agents/${agentId}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': ALICE, 'content-type': 'application/json', origin: fx.base },
      body: JSON.stringify({ granted_permission_sets: { [set]: [mail] } }),
    });
    expect(granted.status, granted.text).toBe(201);
  });

  afterAll(async () => {
    await fx?.stop();
  });

  it('with a grant for the agent: says the client is new, naming its domain and the host it returns to', async () => {
    const page = await fx.open(`/agents/${agentId}?session_token=${encodeURIComponent(await sessionToken(ALICE))}`);
    const p = page.page;
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    const note = p.getByRole('note').filter({ hasText: 'You allowed Tenant Agent before, but not this client.' });
    await note.waitFor();
    expect(await note.textContent()).toContain('tenant-b.example.com');
    const identity = p.getByRole('region', { name: 'Verified identity' });
    expect(await identity.getByRole('link', { name: CLIENT }).count()).toBe(1);
    expect(await identity.getByText('Returns you to').count()).toBe(1);
    expect(await identity.locator('strong', { hasText: 'tenant-b.example.com' }).count()).toBeGreaterThan(0);
    await reviewPage(page, 'consent-cimd-new-client');
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('without a grant: names the client and its return host, with no "allowed before" note', async () => {
    const page = await fx.open(`/agents/${agentId}?session_token=${encodeURIComponent(await sessionToken(BOB))}`, BOB);
    const p = page.page;
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    const identity = p.getByRole('region', { name: 'Verified identity' });
    expect(await identity.getByRole('link', { name: CLIENT }).count()).toBe(1);
    expect(await identity.locator('strong', { hasText: 'tenant-b.example.com' }).count()).toBe(1);
    expect(await p.getByText('but not this client').count()).toBe(0);
    expect(page.pageErrors).toEqual([]);
  });
});
