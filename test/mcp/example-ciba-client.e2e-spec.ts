import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { ApiClient, eventually, freePort, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExampleMcpServer, type ExampleMcpServer } from '../support/example-mcp-server';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';

interface Run {
  readonly output: () => string;
  readonly exit: Promise<number | null>;
}

/**
 * `node examples/mcp/ciba-client.mjs`, as a reader runs it (README "Asking the person for one call (CIBA)"), against
 * the broker and `examples/mcp/server.mjs`: the person approves on her approvals API, the client gets the token and
 * pays; she denies, the client says access_denied.
 */
describe('examples/mcp/ciba-client.mjs against the broker and server.mjs', () => {
  let broker: TestBroker;
  let example: ExampleMcpServer;
  let base: string;
  let mcpUrl: string;
  let alice: ApiClient;
  let agentId: string;
  let secret: string;

  beforeAll(async () => {
    const [port, mcpPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    mcpUrl = `http://127.0.0.1:${mcpPort}/mcp`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: {
          ciba: { enabled: true, interval: '1s' },
          local: { resource_indicators: { allowed_resources: [mcpUrl] } },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const resource = await admin.post('/api/resources', {
      display_name: 'Example MCP server',
      resource_uri: mcpUrl,
      scopes: [{ scope: 'mcp:tools', description: 'Use its tools as you' }],
    });
    expect(resource.status, resource.text).toBe(201);
    const resourceId = resource.json<{ id: string }>().id;
    const set = await admin.post('/api/permission-sets', {
      name: 'MCP tools',
      resource_scopes: [{ resource_id: resourceId, scopes: ['mcp:tools'] }],
    });
    expect(set.status, set.text).toBe(201);
    const setId = set.json<{ id: string }>().id;
    const agent = await admin.post('/api/agents', {
      display_name: 'Payments agent',
      allowed_scopes: ['mcp:tools'],
      permission_sets: [{ permission_set_id: setId }],
    });
    expect(agent.status, agent.text).toBe(201);
    agentId = agent.json<{ id: string }>().id;
    const credentials = await admin.post(`/api/agents/${agentId}/client-credentials`, {});
    expect(credentials.status, credentials.text).toBe(201);
    secret = credentials.json<{ client_secret: string }>().client_secret;
    alice = new ApiClient(base, ALICE);
    const grant = await alice.post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [setId]: [resourceId] },
    });
    expect(grant.status, grant.text).toBe(201);
    example = await startExampleMcpServer({ port: mcpPort, broker: base, url: mcpUrl });
  });

  afterAll(async () => {
    await example?.stop();
    await broker?.stop();
  });

  function runClient(amount: string): Run {
    const child = spawn(
      process.execPath,
      [
        'examples/mcp/ciba-client.mjs',
        '--client-id',
        agentId,
        '--client-secret',
        secret,
        '--login-hint',
        ALICE,
        '--broker',
        base,
        '--mcp',
        mcpUrl,
        '--amount',
        amount,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return { output: () => output, exit: once(child, 'exit').then(([code]) => code as number | null) };
  }

  /** The person's one pending request, once the client says it is polling. */
  async function pendingRequest(run: Run): Promise<{ id: string; binding_message: string | null }> {
    await eventually(run.output, (output) => output.includes('polling for up to'), {
      waitingFor: 'the client to poll',
    });
    const pending = await alice.get('/api/approvals/pending');
    const requests = pending.json<{ data: { id: string; tool_name: string; binding_message: string | null }[] }>().data;
    expect(requests).toHaveLength(1);
    expect(requests[0]?.tool_name).toBe('send_payment');
    return requests[0] as { id: string; binding_message: string | null };
  }

  it('asks, polls while the person decides, and pays exactly the approved amount once she approves', async () => {
    const run = runClient('120');
    const request = await pendingRequest(run);
    expect(request.binding_message).toBe('Pay 120 EUR to acme@example.com');
    expect(run.output()).toContain(
      'Binding message (the approval page shows the same words): Pay 120 EUR to acme@example.com',
    );
    const approved = await alice.post(`/api/approvals/${request.id}/approve`, { persistence: 'once' });
    expect(approved.status, approved.text).toBe(200);
    expect(await run.exit).toBe(0);
    expect(run.output()).toContain(
      `The token authorizes: [{"type":"urn:agent-identity-broker:tool-call","locations":["${mcpUrl}"],"actions":["call"],"tool":"send_payment"`,
    );
    expect(run.output()).toContain('Paid 120 EUR to acme@example.com, approved by alice@example.com');
  });

  it('says access_denied and pays nothing when the person denies', async () => {
    const run = runClient('9000');
    const request = await pendingRequest(run);
    const denied = await alice.post(`/api/approvals/${request.id}/deny`);
    expect(denied.status, denied.text).toBe(200);
    expect(await run.exit).toBe(1);
    expect(run.output()).toContain('access_denied');
    expect(run.output()).not.toContain('Paid');
  });
});
