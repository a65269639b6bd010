import {
  ApiClient,
  BrokerProcess,
  createPostgresDatabase,
  freePort,
  http,
  launchBrowser,
  openConsolePage,
  postgresServerUrl,
  testKey,
  writeConfigFile,
  type RecordedPage,
} from '@broker/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, reviewAdminPage } from '../support/admin-console-fixture';

const ALICE = 'alice@example.com';

/**
 * Suspending an agent from the admin console of one broker process is seen at once by another process on the same
 * PostgreSQL (the registry's change notification, well before any cache's backstop): its token requests there are
 * refused, the other process's admin console badges it and its person's console says so, and resuming from that
 * other console makes the same secret and the same person's grant work again, on the first process too.
 */
describe.runIf(postgresServerUrl())('admin console: suspend and resume across broker processes', () => {
  const replicas: BrokerProcess[] = [];
  const admin: string[] = [];
  const enduser: string[] = [];
  const opened: RecordedPage[] = [];
  let browser: Browser;

  beforeAll(async () => {
    const connection = await createPostgresDatabase();
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    };
    for (let i = 0; i < 2; i += 1) {
      const [adminPort, enduserPort] = [await freePort(), await freePort()];
      // Each console is served by its own process at its own origin, which must be that admin server's public URL
      // for its writes to pass the cross-site check.
      const { file } = writeConfigFile({
        server: {
          enduser: { port: enduserPort, public_url: `http://127.0.0.1:${enduserPort}` },
          admin: { port: adminPort, public_url: `http://127.0.0.1:${adminPort}` },
        },
        storage: { backend: 'postgres', postgres: { connection_url: connection } },
        ...keys,
      });
      const replica = new BrokerProcess('broker', ['--config', file]);
      replicas.push(replica);
      const urls = await replica.listening(['enduser', 'admin']);
      admin.push(urls.admin as string);
      enduser.push(urls.enduser as string);
    }
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const recorded of opened) await recorded.close();
    await browser?.close().catch(() => undefined);
    for (const replica of replicas) {
      replica.signal('SIGTERM');
      await replica.exited;
    }
  });

  async function openAdmin(replica: number, path: string): Promise<RecordedPage> {
    const base = admin[replica] as string;
    const recorded = await openConsolePage(browser, { broker: base, principal: ADMIN });
    opened.push(recorded);
    const response = await recorded.page.goto(`${base}${path}`);
    expect(response?.status(), `GET ${path}`).toBe(200);
    await recorded.page.locator('main').first().waitFor();
    return recorded;
  }

  async function tokenStatus(replica: number, agentId: string, secret: string): Promise<number> {
    const response = await http(`${enduser[replica] as string}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: agentId,
        client_secret: secret,
      }).toString(),
    });
    return response.status;
  }

  /** The status the replica's token endpoint answers once it settles, polled for at most a second. */
  async function settlesTo(replica: number, agentId: string, secret: string, status: number): Promise<number> {
    const deadline = Date.now() + 1_000;
    let seen = await tokenStatus(replica, agentId, secret);
    while (seen !== status && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      seen = await tokenStatus(replica, agentId, secret);
    }
    return seen;
  }

  it("suspends on one process's console: the other refuses at once and badges it; resuming there restores the same secret and grant", async () => {
    const api = new ApiClient(admin[0] as string, ADMIN);
    const created = async (path: string, body: Record<string, unknown>): Promise<string> => {
      const response = await api.post(path, body);
      expect(response.status, `${path}: ${response.text}`).toBe(201);
      return response.json<{ id: string }>().id;
    };
    const service = await created('/api/services', {
      display_name: 'Calendar',
      client_id: 'calendar-client',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/authorize',
      token_endpoint: 'https://idp.example.com/token',
      scopes: [{ scope: 'calendar.read', description: 'See your calendar' }],
      protected_resources: ['https://calendar.example.com/api'],
    });
    const set = await created('/api/permission-sets', {
      name: 'Calendar access',
      service_scopes: [{ service_id: service, scopes: ['calendar.read'] }],
    });
    const agent = await created('/api/agents', {
      display_name: 'Scheduling assistant',
      permission_sets: [{ permission_set_id: set }],
    });
    const secret = (await api.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    const allowed = await new ApiClient(enduser[0] as string, ALICE).post(`/api/consent/agents/${agent}/grants`, {
      granted_permission_sets: { [set]: [service] },
    });
    expect(allowed.status, allowed.text).toBe(201);
    // Both processes serve the agent's secret (from their caches from now on).
    expect(await settlesTo(1, agent, secret, 200)).toBe(200);
    expect(await tokenStatus(0, agent, secret)).toBe(200);

    const onA = await openAdmin(0, `/agents/${agent}`);
    await onA.page.getByRole('button', { name: 'Suspend', exact: true }).click();
    const dialog = onA.page.getByRole('dialog', { name: 'Suspend Scheduling assistant?' });
    await dialog.getByLabel('Reason (optional)').fill('Unexpected calendar exports');
    await dialog.getByRole('button', { name: 'Suspend agent' }).click();
    await onA.page.getByRole('status').filter({ hasText: 'Scheduling assistant is suspended since' }).waitFor();
    expect(await settlesTo(1, agent, secret, 401)).toBe(401);
    expect(await tokenStatus(0, agent, secret)).toBe(401);

    const onB = await openAdmin(1, '/agents');
    const card = onB.page
      .getByRole('list', { name: 'Agents', exact: true })
      .getByRole('listitem')
      .filter({ has: onB.page.getByRole('link', { name: 'Scheduling assistant' }) });
    await card.getByText('Suspended', { exact: true }).waitFor();
    await card.getByRole('link', { name: 'Scheduling assistant' }).click();
    await onB.page.getByText('Reason: Unexpected calendar exports', { exact: false }).waitFor();
    await reviewAdminPage(onB, 'suspend-replicas-suspended');
    // The person's console on the other process says so too.
    const person = await openConsolePage(browser, { broker: enduser[1] as string, principal: ALICE });
    opened.push(person);
    await person.page.goto(`${enduser[1] as string}/agents/${agent}`);
    await person.page.getByRole('heading', { name: 'Suspended by your administrators' }).waitFor();

    await onB.page.getByRole('button', { name: 'Resume', exact: true }).click();
    await onB.page
      .getByRole('dialog', { name: 'Resume Scheduling assistant?' })
      .getByRole('button', { name: 'Resume agent' })
      .click();
    await onB.page.getByRole('button', { name: 'Suspend', exact: true }).waitFor();
    expect(await settlesTo(0, agent, secret, 200)).toBe(200);
    expect(await tokenStatus(1, agent, secret)).toBe(200);
    // The person's grant was never touched: their console's list still has the agent.
    const delegations = await new ApiClient(enduser[0] as string, ALICE).get('/api/consent/agents');
    expect(delegations.json<{ data: { agent_id: string }[] }>().data.map((item) => item.agent_id)).toContain(agent);
  });
});
