import { http, type RecordedPage } from '@broker/testing';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import type { Request } from 'playwright-core';
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
import { allowByOrganisation } from '../support/enterprise-authorizations';

const REDIRECT = 'https://agent.example.com/cb';
const DOCS_URI = 'https://docs-mcp.example.com/mcp';
const TICKETS_URI = 'https://tickets.example.com/mcp';
const insecure = { [oauth.allowInsecureRequests]: true };

interface GrantView {
  valid_until: string | null;
  granted_permission_sets: Record<string, string[]>;
}

/**
 * MCP servers (protected resources the broker is the authorization server of) on the consent
 * page, in a real Chromium against one real broker: listed apart from third-party accounts, by
 * name and address, with nothing to connect; Allow delegates them with the set's services; a
 * later request for another MCP server asks for that one alone (incremental consent) and adds it
 * to the grant; the Agents page lists both.
 */
describe('console: MCP servers on the consent page', () => {
  let fx: ConsoleFixture;
  let as: oauth.AuthorizationServer;
  let mail: string;
  let docs: string;
  let tickets: string;
  let workSet: string;
  let ticketSet: string;
  let agentId: string;
  const opened: RecordedPage[] = [];

  const created = (path: string, body: Record<string, unknown>): Promise<string> => adminCreated(fx.admin, path, body);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    mail = await placeholderService(fx.admin, PLACEHOLDER_MAIL);
    docs = await created('/api/resources', {
      display_name: 'Docs search',
      description: 'Searches the company wiki.',
      resource_uri: DOCS_URI,
      scopes: [
        { scope: 'docs.search', description: 'Search your documents' },
        { scope: 'docs.write', description: 'Edit your documents' },
      ],
    });
    tickets = await created('/api/resources', {
      display_name: 'Tickets',
      description: 'The help desk.',
      resource_uri: TICKETS_URI,
      scopes: [{ scope: 'tickets.read', description: 'Read your tickets' }],
    });
    workSet = await created('/api/permission-sets', {
      name: 'Work tools',
      description: 'Your mail and the wiki',
      service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
      resource_scopes: [{ resource_id: docs, scopes: ['docs.search'] }],
    });
    ticketSet = await created('/api/permission-sets', {
      name: 'Help desk',
      description: 'Your tickets',
      resource_scopes: [{ resource_id: tickets, scopes: ['tickets.read'] }],
    });
    agentId = await created('/api/agents', {
      display_name: 'Research Assistant',
      description: 'Answers questions from your documents.',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: workSet }, { permission_set_id: ticketSet, requirement_type: 'optional' }],
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

  async function grants(agent = agentId): Promise<GrantView[]> {
    const response = await http(`${fx.base}/api/consent/agents/${agent}/grants`, {
      headers: { 'x-remote-user': ALICE },
    });
    expect(response.status, response.text).toBe(200);
    return response.json<{ data: GrantView[] }>().data;
  }

  /**
   * The agent's authorization request for one MCP server, in the browser, landing on the consent
   * page; the redirect_uri is answered here, and `landing()` (called before the decision) records it.
   */
  async function startAtConsent(
    resource: string,
    agent = agentId,
  ): Promise<{ page: RecordedPage; verifier: string; state: string; landing: () => Promise<Request> }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    const params = {
      client_id: agent,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state,
      resource,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const page = await fx.blank();
    opened.push(page);
    await page.page
      .context()
      .route(`${REDIRECT}**`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/plain', body: 'agent callback' }),
      );
    await page.page.goto(url.toString());
    await page.page.waitForURL((u) => u.pathname === `/agents/${agent}`);
    await page.page.getByRole('button', { name: /^allow/i }).waitFor();
    const landing = () =>
      page.page.waitForRequest((request) => request.url().startsWith(REDIRECT), { timeout: 15_000 });
    return { page, verifier, state, landing };
  }

  /** The code at the redirect_uri, redeemed with PKCE: the token's audience. */
  async function redeem(landed: Promise<Request>, verifier: string, state: string, agent = agentId): Promise<unknown> {
    const callback = new URL((await landed).url());
    expect(callback.searchParams.get('error')).toBeNull();
    expect(callback.searchParams.get('code')).toBeTruthy();
    const client: oauth.Client = { client_id: agent, token_endpoint_auth_method: 'none' };
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    return decodeJwt(tokens.access_token).aud;
  }

  it('lists the requested MCP server apart from third-party accounts, by name and address with its permissions and nothing to connect; Allow delegates it with the set', async () => {
    const { page, verifier, state, landing } = await startAtConsent(DOCS_URI);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Research Assistant wants to act for you' }).waitFor();

    // Each MCP server is listed once, in its permission set, with what it is, and what an MCP server is said once.
    const servers = p.getByRole('list', { name: 'MCP servers in Work tools' });
    const docsEntry = servers.getByRole('listitem').filter({ hasText: 'Docs search' });
    await docsEntry.getByText(DOCS_URI, { exact: true }).waitFor();
    await docsEntry.getByText('Searches the company wiki.').waitFor();
    await docsEntry.getByText('Search your documents').waitFor();
    await docsEntry.getByText('Asked for now', { exact: true }).waitFor();
    expect(await p.getByText('Docs search', { exact: true }).count()).toBe(1);
    expect(await p.getByText(/^An MCP server is a service whose tools the agent calls for you/).count()).toBe(1);
    // Only what the set delegates: not the server's other scope.
    expect(await docsEntry.getByText('Edit your documents').count()).toBe(0);
    // The address is text, never a link; an MCP server has no account: no Connect, no "Not connected".
    expect(await servers.getByRole('link').count()).toBe(0);
    expect(await servers.getByText(/not connected/i).count()).toBe(0);
    expect(await p.getByRole('link', { name: /Connect Docs search/ }).count()).toBe(0);

    const accounts = p.getByRole('region', { name: 'Third-party accounts' });
    const mailEntry = accounts.getByRole('listitem').filter({ hasText: 'Mail' });
    await mailEntry.getByText('Not connected', { exact: true }).waitFor();
    await mailEntry.getByRole('link', { name: 'Connect Mail' }).waitFor();
    expect(await accounts.getByText('Docs search').count()).toBe(0);

    // The permission set shows its service and its MCP server.
    await p.getByRole('list', { name: 'Services in Work tools' }).getByText('Mail', { exact: true }).waitFor();
    await p
      .getByRole('list', { name: 'MCP servers in Work tools' })
      .getByText('Docs search', { exact: true })
      .waitFor();
    await p.getByRole('list', { name: 'MCP servers in Help desk' }).getByText('Tickets', { exact: true }).waitFor();
    await reviewPage(page, 'consent-mcp');

    const landed = landing();
    await p.getByRole('button', { name: /^allow/i }).click();
    expect(await redeem(landed, verifier, state)).toBe(DOCS_URI);
    const [grant] = await grants();
    expect(
      Object.fromEntries(
        Object.entries(grant?.granted_permission_sets ?? {}).map(([setId, ids]) => [setId, [...ids].sort()]),
      ),
    ).toEqual({ [workSet]: [mail, docs].sort() });
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('a later request for another MCP server asks for that one alone, keeps what was allowed, and Allow adds it to the grant', async () => {
    const [before] = await grants();
    expect(before).toBeDefined();
    const { page, verifier, state, landing } = await startAtConsent(TICKETS_URI);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Allow Research Assistant to use Tickets?' }).waitFor();
    await p.getByText('What you allowed Research Assistant before stays allowed').waitFor();
    const servers = p.getByRole('list', { name: 'MCP servers in Help desk' });
    const ticketsEntry = servers.getByRole('listitem').filter({ hasText: 'Tickets' });
    await ticketsEntry.getByText(TICKETS_URI, { exact: true }).waitFor();
    await ticketsEntry.getByText('Read your tickets').waitFor();
    await ticketsEntry.getByText('Asked for now', { exact: true }).waitFor();
    expect(await p.getByText('Tickets', { exact: true }).count()).toBe(1);
    // Only the set covering Tickets, ticked; nothing allowed before is offered again; the expiry stays the grant's.
    expect(await p.getByRole('checkbox', { name: 'Help desk' }).isChecked()).toBe(true);
    expect(await p.getByRole('checkbox').count()).toBe(1);
    expect(await p.getByText('Docs search').count()).toBe(0);
    expect(await p.getByText('Mail', { exact: true }).count()).toBe(0);
    expect(await p.getByRole('region', { name: 'Third-party accounts' }).count()).toBe(0);
    expect(await p.getByRole('radio').count()).toBe(0);
    await reviewPage(page, 'consent-mcp-step-up');

    const landed = landing();
    await p.getByRole('button', { name: /^allow/i }).click();
    expect(await redeem(landed, verifier, state)).toBe(TICKETS_URI);
    const [after] = await grants();
    expect(
      Object.fromEntries(
        Object.entries(after?.granted_permission_sets ?? {}).map(([setId, ids]) => [setId, [...ids].sort()]),
      ),
    ).toEqual({ [workSet]: [mail, docs].sort(), [ticketSet]: [tickets] });
    expect(after?.valid_until).toBe(before?.valid_until);
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('an agent whose only set is an optional MCP server: the request pre-selects it, and Allow delegates it', async () => {
    const botId = await created('/api/agents', {
      display_name: 'Ticket Bot',
      redirect_uris: [REDIRECT],
      permission_sets: [{ permission_set_id: ticketSet, requirement_type: 'optional' }],
    });
    const { page, verifier, state, landing } = await startAtConsent(TICKETS_URI, botId);
    const p = page.page;
    expect(await p.getByRole('checkbox', { name: 'Help desk' }).isChecked()).toBe(true);
    await p
      .getByRole('list', { name: 'MCP servers in Help desk' })
      .getByText('Asked for now', { exact: true })
      .waitFor();
    expect(await p.getByRole('region', { name: 'Third-party accounts' }).count()).toBe(0);
    const landed = landing();
    await p.getByRole('button', { name: /^allow/i }).click();
    expect(await redeem(landed, verifier, state, botId)).toBe(TICKETS_URI);
    expect((await grants(botId))[0]?.granted_permission_sets).toEqual({ [ticketSet]: [tickets] });
  });

  it('the Agents page lists the MCP servers the agent may use, by name with the address, and Activity names them in the grant change', async () => {
    const page = await fx.open('/agents');
    opened.push(page);
    const card = page.page
      .getByRole('listitem')
      .filter({ has: page.page.getByRole('link', { name: 'Research Assistant' }) });
    const servers = card.getByRole('list', { name: 'MCP servers Research Assistant may use' });
    await servers.getByText('Docs search', { exact: true }).waitFor();
    await servers.getByText(DOCS_URI, { exact: true }).waitFor();
    await servers.getByText('Tickets', { exact: true }).waitFor();
    await servers.getByText(TICKETS_URI, { exact: true }).waitFor();
    await reviewPage(page, 'agents-mcp');
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);

    // Activity: the incremental consent is "Access changed", naming the MCP servers the grant now delegates.
    const activity = await fx.open('/activity');
    opened.push(activity);
    const changed = activity.page
      .getByRole('listitem')
      .filter({ has: activity.page.getByRole('heading', { name: 'Access changed' }) });
    const named = changed.getByRole('definition').filter({ hasText: 'Tickets' });
    await expect
      .poll(async () => (await named.count()) > 0 && (await named.first().innerText()).split(', ').sort())
      .toEqual(['Docs search', 'Tickets']);
  });

  it("the Agents page shows what the person's organisation allowed, marked so, and Revoke ends it after a confirmation", async () => {
    const copilot = await created('/api/agents', { display_name: 'Support Copilot', allowed_resources: [TICKETS_URI] });
    // As the JWT bearer grant records a token issued on the organisation's identity assertion.
    const authorization = await allowByOrganisation(fx.broker, {
      principal: ALICE,
      agentId: copilot,
      issuer: 'https://acme.okta.example/oauth2/default',
      resourceUri: TICKETS_URI,
      scopes: ['tickets.read'],
      issuedAt: fx.clock.now(),
    });
    const page = await fx.open('/agents');
    opened.push(page);
    const p = page.page;
    const section = p.getByRole('region', { name: 'Allowed by your organisation' });
    const card = section.getByRole('listitem').filter({ hasText: 'Support Copilot' }).first();
    await card.getByText('Allowed by your organisation', { exact: true }).waitFor();
    await card.getByText('acme.okta.example', { exact: true }).waitFor();
    await card.getByText('tickets.read', { exact: true }).waitFor();
    const server = card.getByRole('list', { name: 'MCP server Support Copilot may use' });
    await server.getByText('Tickets', { exact: true }).waitFor();
    await server.getByText(TICKETS_URI, { exact: true }).waitFor();
    await reviewPage(page, 'agents-organisation');

    await card.getByRole('button', { name: "Revoke Support Copilot's access to Tickets" }).click();
    const dialog = p.getByRole('dialog', { name: "Revoke Support Copilot's access to Tickets?" });
    await dialog.getByText(/current tokens stop working at once/).waitFor();
    await dialog.getByText(/identity provider can allow it again\. To stop that, ask your administrator/).waitFor();
    await reviewPage(page, 'agents-organisation-revoke');
    await dialog.getByRole('button', { name: 'Revoke access' }).click();
    await p
      .getByRole('status')
      .getByText(/Revoked what your organisation allowed Support Copilot on Tickets/)
      .waitFor();
    await section.waitFor({ state: 'detached' });
    const left = await http(`${fx.base}/api/consent/enterprise-authorizations`, {
      headers: { 'x-remote-user': ALICE },
    });
    expect(left.json<{ data: { id: string }[] }>().data.map((item) => item.id)).not.toContain(authorization);
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);

    // Activity: the revocation in the person's words.
    const activity = await fx.open('/activity');
    opened.push(activity);
    const revoked = activity.page
      .getByRole('listitem')
      .filter({ has: activity.page.getByRole('heading', { name: 'Organisation access revoked' }) });
    await revoked.getByText(TICKETS_URI, { exact: true }).waitFor();
    await revoked.getByText('acme.okta.example', { exact: true }).waitFor();
    await reviewPage(activity, 'activity-organisation');
  });
});
