import { ApiClient, http, type HttpResponse, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';
import { allowByOrganisation } from '../support/enterprise-authorizations';
import { grantedAgent, type GrantedAgent } from '../support/granted-agent';

const TICKETS_URI = 'https://tickets.example.com/mcp';

/**
 * In a real Chromium: revoking an agent on the Agents page says which of its approvals end
 * with it, and they do (docs/approvals.md "Grants and approvals"): Remembered no longer lists
 * its "Always" decisions, its waiting request leaves Approvals, and a new request of the
 * revoked agent is refused and never reaches the person.
 */
describe('console: revoking an agent ends its approvals', () => {
  let fx: ConsoleFixture;
  let agent: GrantedAgent;
  const alice = (): ApiClient => new ApiClient(fx.base, ALICE);
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    agent = await grantedAgent({ admin: fx.admin.baseUrl, enduser: fx.base }, [ALICE], 'Deploy Helper');
  });

  afterAll(async () => {
    await fx?.stop();
  });

  /** The agent's gateway asks Alice to approve a tool call. */
  async function ask(tool: string, args: Record<string, unknown>): Promise<HttpResponse> {
    return http(`${fx.base}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agent.id)}`,
        'x-client-assertion': await fx.gateway.assertion(),
      },
      body: JSON.stringify({ tool_name: tool, arguments: args, metadata: {}, risk_level: 'critical' }),
    });
  }

  async function pending(tool: string, args: Record<string, unknown>): Promise<string> {
    const response = await ask(tool, args);
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  it("explains its terms where they appear, and shows what the organisation allowed in words, with the current sign-in's end", async () => {
    const resource = await fx.admin.post('/api/resources', {
      display_name: 'Tickets',
      resource_uri: TICKETS_URI,
      scopes: [{ scope: 'tickets.read', description: 'Read your support tickets' }],
    });
    expect(resource.status, resource.text).toBe(201);
    // An agent Alice allowed one MCP server: its card names "1 MCP server".
    const ticketSet = await fx.admin.post('/api/permission-sets', {
      name: 'Help desk',
      resource_scopes: [{ resource_id: resource.json<{ id: string }>().id, scopes: ['tickets.read'] }],
    });
    expect(ticketSet.status, ticketSet.text).toBe(201);
    const helper = await fx.admin.post('/api/agents', {
      display_name: 'Ticket Helper',
      permission_sets: [{ permission_set_id: ticketSet.json<{ id: string }>().id }],
    });
    expect(helper.status, helper.text).toBe(201);
    const allowed = await alice().post(`/api/consent/agents/${helper.json<{ id: string }>().id}/grants`, {
      granted_permission_sets: { [ticketSet.json<{ id: string }>().id]: [resource.json<{ id: string }>().id] },
    });
    expect(allowed.status, allowed.text).toBe(201);
    const copilot = await fx.admin.post('/api/agents', { display_name: 'Support Copilot' });
    expect(copilot.status, copilot.text).toBe(201);
    await allowByOrganisation(fx.broker, {
      principal: ALICE,
      agentId: copilot.json<{ id: string }>().id,
      resourceUri: TICKETS_URI,
      scopes: ['tickets.read', 'tickets.export'],
      issuedAt: fx.clock.now(),
    });
    const page = await open('/agents');
    const p = page.page;
    // "No active sign-in" and "MCP server", each explained on demand where it appears (a native disclosure).
    const card = p
      .getByRole('list', { name: 'Agents with access' })
      .getByRole('listitem')
      .filter({ has: p.getByRole('link', { name: 'Ticket Helper' }) });
    const explanation = card.getByText(/It gets one the next time it asks, as long as you allow it\./);
    expect(await explanation.isVisible()).toBe(false);
    await card.locator('summary', { hasText: 'No active sign-in' }).click();
    await explanation.waitFor();
    await card.locator('summary', { hasText: '1 MCP server' }).click();
    await card
      .getByText(/An MCP server is a service whose tools the agent calls for you; this broker lets the agent in\./)
      .waitFor();
    // What the organisation allowed: the scope in words with its code beside it; a scope without words as its code.
    const section = p.getByRole('region', { name: 'Allowed by your organisation' });
    await section.getByText(/An MCP server is a service whose tools the agent calls for you\./).waitFor();
    const permissions = section.getByRole('list', { name: 'What Support Copilot may do' });
    await permissions.getByText('Read your support tickets', { exact: true }).waitFor();
    await permissions.getByText('tickets.read', { exact: true }).waitFor();
    await permissions.getByText('tickets.export', { exact: true }).waitFor();
    await section.getByText(/^Current sign-in ends /).waitFor();
    expect(await section.getByText(/^Until /).count()).toBe(0);
    await reviewPage(page, 'agents-terms-explained');
  });

  it('names the remembered decisions in the revoke dialog; afterwards Remembered and Approvals no longer hold them, and a new request is refused', async () => {
    const always = await pending('deploy.run', { target: 'production' });
    expect((await alice().post(`/api/approvals/${always}/approve`, { persistence: 'permanent' })).status).toBe(200);
    const never = await pending('disk.wipe', { disk: '/dev/sda' });
    expect((await alice().post(`/api/approvals/${never}/deny`, { persistence: 'permanent' })).status).toBe(200);
    const waiting = await pending('service.restart', { service: 'payments' });

    const remembered = await open('/approvals/remembered');
    await remembered.page.getByText('deploy.run', { exact: true }).waitFor();
    await remembered.page.getByText('disk.wipe', { exact: true }).waitFor();

    const agents = await open('/agents');
    const p = agents.page;
    await p.getByRole('button', { name: 'Revoke access for Deploy Helper' }).click();
    const dialog = p.getByRole('dialog', { name: 'Revoke access for Deploy Helper?' });
    await dialog
      .getByText('2 remembered decisions (Always allow / Always deny) for this agent end too.', { exact: true })
      .waitFor();
    await dialog.getByText('1 request waiting for your approval is withdrawn.', { exact: true }).waitFor();
    await dialog.getByText('It can no longer ask you to approve its actions.', { exact: true }).waitFor();
    await reviewPage(agents, 'agents-revoke-approvals');
    await dialog.getByRole('button', { name: 'Revoke access' }).click();
    const notice = p.getByRole('status').getByText(/^Revoked access for Deploy Helper/);
    await notice.waitFor();
    const said = await notice.innerText();
    expect(said).toContain('2 remembered decisions (Always allow / Always deny) for this agent ended too.');
    expect(said).toContain('1 request waiting for your approval was withdrawn.');
    await p.getByRole('link', { name: 'Deploy Helper' }).waitFor({ state: 'detached' });
    expect(agents.pageErrors).toEqual([]);
    expect(agents.unexpectedErrors()).toEqual([]);

    // Remembered: the agent's Always decisions are gone (read again, not from the page's cache).
    await remembered.page.reload();
    await remembered.page.getByText('You have no remembered decisions.').waitFor();
    await reviewPage(remembered, 'approvals-remembered-after-revoke');

    // The waiting request is no longer put in front of Alice: not in Approvals, and its page offers no decision.
    const approvals = await open('/approvals');
    await approvals.page.getByText('Nothing is waiting for you.').waitFor();
    const request = await open(`/approvals/${waiting}`);
    await request.page.getByText('Revoked', { exact: true }).waitFor();
    expect(await request.page.getByRole('button', { name: /approve|deny/i }).count()).toBe(0);

    // The revoked agent asks again (a critical call): refused, and nothing new appears.
    const refused = await ask('service.restart', { service: 'payments' });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.json<{ error: string }>().error).toBe('grant_required');
    expect((await ask('deploy.run', { target: 'production' })).status).toBe(403);
    await approvals.page.reload();
    await approvals.page.getByText('Nothing is waiting for you.').waitFor();
    await reviewPage(approvals, 'approvals-after-revoke');
  });
});
