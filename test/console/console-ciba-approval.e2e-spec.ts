import { CibaRequests, type CibaRequestInput } from '@broker/approvals';
import { http, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent } from '../support/granted-agent';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';

const PAYMENTS = 'https://payments.example.com/mcp';

/**
 * In a real Chromium: an agent's standard request (OpenID CIBA with an RFC 9396 tool-call entry, docs/ciba.md) is
 * decided on the same approval page as a gateway's. The page puts the binding message first ("check that your
 * agent shows the same words"), names the tool by the entry's title and description and the MCP server by its
 * registered name (its address beside), shows the arguments in words and the risk, and offers "Only this call",
 * "Always" and "Deny" but no agent session; the pending list marks the request as the agent's own.
 */
describe('console: deciding an agent’s standard (CIBA) request', () => {
  let fx: ConsoleFixture;
  let ciba: CibaRequests;
  let agent: string;
  const open = (path: string): Promise<RecordedPage> => fx.open(path, ALICE);

  beforeAll(async () => {
    fx = await startConsoleFixture();
    ciba = fx.broker.broker.server('enduser').app.get(CibaRequests);
    const resource = await fx.admin.post('/api/resources', {
      display_name: 'Payments',
      resource_uri: PAYMENTS,
      scopes: [{ scope: 'payments.send', description: 'Send payments for you' }],
    });
    expect(resource.status, resource.text).toBe(201);
    agent = (await grantedAgent({ admin: fx.broker.url('admin'), enduser: fx.base }, [ALICE], 'Invoice Agent')).id;
  });

  afterAll(async () => {
    await fx?.stop();
  });

  async function ask(args: Record<string, unknown>, words: string): Promise<{ authReqId: string; id: string }> {
    const entry = {
      type: 'urn:agent-identity-broker:tool-call',
      locations: [PAYMENTS],
      actions: ['call'],
      tool: 'send_payment',
      title: 'Send a payment',
      description: 'Pays an invoice from the company account.\nThe money leaves at once.',
      arguments: args,
      risk: 'critical',
    };
    const input: CibaRequestInput = {
      principal: ALICE,
      agentId: agent,
      requester: 'agent',
      detail: { tool: 'send_payment', arguments: args, risk: 'critical', json: JSON.stringify(entry) },
      bindingMessage: words,
      scopes: [],
      expiresInMs: 600_000,
      intervalMs: 5_000,
    };
    const outcome = await ciba.request(input);
    if (outcome.kind !== 'created') throw new Error(`not created: ${JSON.stringify(outcome)}`);
    return { authReqId: outcome.authReqId, id: outcome.approvalId };
  }

  it('shows the words to check, the tool and the MCP server in words, offers no agent session; approving once answers the poll', async () => {
    const { authReqId, id } = await ask({ to: 'acme@example.com', amount_eur: 120, invoice: 'INV-2031' }, 'BLUE-42');

    const list = await open('/approvals');
    const item = list.page
      .getByRole('list', { name: 'Pending approvals' })
      .getByRole('listitem')
      .filter({ has: list.page.getByRole('link', { name: 'Send a payment' }) });
    await item.getByText('Asked by the agent directly').waitFor();
    await item.getByText('BLUE-42', { exact: true }).waitFor();
    expect(await item.getByText('MCP server: Payments').count()).toBe(1);
    await reviewPage(list, 'approvals-ciba-pending');
    await list.page.close();

    const page = await open(`/approvals/${id}`);
    const p = page.page;
    const check = p.getByRole('region', { name: 'Check that your agent shows the same words' });
    await check.getByText('BLUE-42', { exact: true }).waitFor();
    expect(await p.getByRole('heading', { level: 1 }).innerText()).toContain('Send a payment');
    await p.getByText('Tool', { exact: false }).filter({ hasText: 'send_payment' }).first().waitFor();
    const why = p.getByRole('region', { name: 'What this tool does' });
    expect(await why.innerText()).toContain('Pays an invoice from the company account.');
    const request = p.getByRole('region', { name: 'The request' });
    const server = request.locator('dt', { hasText: 'MCP server' }).locator('xpath=following-sibling::dd[1]');
    expect(await server.innerText()).toContain('Payments');
    expect(await server.innerText()).toContain(PAYMENTS);
    await request.getByText('acme@example.com', { exact: true }).waitFor();
    await request.getByText('INV-2031', { exact: true }).waitFor();
    expect(await p.getByText('critical', { exact: false }).count()).toBeGreaterThan(0);
    // Once and always, never an agent session: a backchannel request has none.
    await p.getByRole('radio', { name: /^Only this call/ }).waitFor();
    expect(await p.getByRole('radio', { name: /^Always/ }).count()).toBe(1);
    expect(await p.getByRole('radio', { name: /This agent session/ }).count()).toBe(0);
    expect(await p.getByText(/This agent session/).count()).toBe(0);
    await reviewPage(page, 'approval-ciba');

    expect(await ciba.poll(authReqId, agent, 'agent')).toEqual({ kind: 'pending' });
    await p.getByRole('button', { name: 'Approve this call' }).click();
    await p.getByRole('status').filter({ hasText: 'The agent receives the decision when it next checks.' }).waitFor();
    fx.clock.advance(5_000);
    expect(await ciba.poll(authReqId, agent, 'agent')).toMatchObject({ kind: 'approved', principal: ALICE });
    // Decided: the words stay on the page among the facts, no longer as a call to check.
    await p.reload();
    await p.getByRole('heading', { name: 'Decision' }).waitFor();
    expect(await p.getByRole('region', { name: 'Check that your agent shows the same words' }).count()).toBe(0);
    await p.getByText('BLUE-42', { exact: true }).waitFor();
    await reviewPage(page, 'approval-ciba-decided');
    expect(page.pageErrors).toEqual([]);
  });

  it('denying on the page answers the poll access denied', async () => {
    const { authReqId, id } = await ask({ to: 'mallory@evil.example', amount_eur: 9_000 }, 'RED-7');
    const page = await open(`/approvals/${id}`);
    const p = page.page;
    await p.getByRole('region', { name: 'Check that your agent shows the same words' }).getByText('RED-7').waitFor();
    await p.getByRole('button', { name: 'Deny this call' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: 'Denied. The agent receives the decision when it next checks.' })
      .waitFor();
    const stored = await http(`${fx.base}/api/approvals/${id}`, { headers: { 'x-remote-user': ALICE } });
    expect(stored.json<{ data: { status: string; requested_via: string } }>().data).toMatchObject({
      status: 'denied',
      requested_via: 'ciba',
    });
    expect(await ciba.poll(authReqId, agent, 'agent')).toEqual({ kind: 'denied' });
    expect(page.pageErrors).toEqual([]);
  });
});
