import { ClientCredentialsService } from '@broker/oauth-server';
import { ApiClient, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const UNKNOWN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('admin: agent client credentials', () => {
  let broker: TestBroker;
  let admin: ApiClient;
  let verifier: ClientCredentialsService;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    admin = new ApiClient(broker.url('admin'));
    // The token endpoint (end-user server) verifies secrets through this service.
    verifier = broker.broker.server('enduser').app.get(ClientCredentialsService);
  });

  afterAll(async () => {
    await broker.stop();
  });

  const newAgent = async (): Promise<string> =>
    (await admin.post('/api/agents', { display_name: 'Agent' })).json<{ id: string }>().id;

  it('generates a secret once (201), shows only metadata afterwards, and verifies it', async () => {
    const agent = await newAgent();
    const generated = await admin.post(`/api/agents/${agent}/client-credentials`);
    expect(generated.status).toBe(201);
    expect(generated.headers['cache-control']).toBe('no-store');
    const body = generated.json<{ client_id: string; client_secret: string; created_at: string }>();
    expect(Object.keys(body).sort()).toEqual(['client_id', 'client_secret', 'created_at']);
    expect(body.client_id).toBe(agent);
    expect(body.client_secret).toMatch(/^aib_cs_[A-Za-z0-9_-]{43}$/);

    const metadata = await admin.get(`/api/agents/${agent}/client-credentials`);
    expect(metadata.status).toBe(200);
    expect(metadata.json()).toEqual({ client_id: agent, created_at: body.created_at, rotated_at: null });
    expect(metadata.text).not.toContain(body.client_secret);

    expect(await verifier.verifyClientSecret(agent, body.client_secret)).toBe(true);
    expect(await verifier.verifyClientSecret(agent, `${body.client_secret}x`)).toBe(false);
    expect(await verifier.verifyClientSecret(await newAgent(), body.client_secret)).toBe(false);
  });

  it('rotates (200, previous_invalidated_at): the old secret stops working at once', async () => {
    const agent = await newAgent();
    const first = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{
      client_secret: string;
      created_at: string;
    }>();
    const rotated = await admin.post(`/api/agents/${agent}/client-credentials`);
    expect(rotated.status).toBe(200);
    const second = rotated.json<{
      client_id: string;
      client_secret: string;
      created_at: string;
      previous_invalidated_at: string;
    }>();
    expect(second.client_secret).not.toBe(first.client_secret);
    expect(second.created_at).toBe(first.created_at);
    expect(new Date(second.previous_invalidated_at).toISOString()).toBe(second.previous_invalidated_at);
    expect(await verifier.verifyClientSecret(agent, first.client_secret)).toBe(false);
    expect(await verifier.verifyClientSecret(agent, second.client_secret)).toBe(true);
    expect((await admin.get(`/api/agents/${agent}/client-credentials`)).json()).toMatchObject({
      rotated_at: second.previous_invalidated_at,
    });
  });

  it('revokes irreversibly (204, then 404) and the secret stops working', async () => {
    const agent = await newAgent();
    const { client_secret: secret } = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{
      client_secret: string;
    }>();
    expect((await admin.delete(`/api/agents/${agent}/client-credentials`)).status).toBe(204);
    expect(await verifier.verifyClientSecret(agent, secret)).toBe(false);
    const gone = await admin.get(`/api/agents/${agent}/client-credentials`);
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({
      error: 'client credentials not found',
      message: `agent ${agent} has no client credentials`,
    });
    expect((await admin.delete(`/api/agents/${agent}/client-credentials`)).status).toBe(404);
  });

  it('deleting the agent removes its credentials with it', async () => {
    const agent = await newAgent();
    const { client_secret: secret } = (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{
      client_secret: string;
    }>();
    await admin.delete(`/api/agents/${agent}`);
    expect(await verifier.verifyClientSecret(agent, secret)).toBe(false);
    const rows = await broker.broker.runtime.database.dataSource.query<unknown[]>(
      'SELECT 1 FROM agent_client_credentials WHERE agent_id = $1',
      [agent],
    );
    expect(rows).toEqual([]);
  });

  it('answers 404 agent not found for an unknown agent on every verb', async () => {
    for (const response of [
      await admin.post(`/api/agents/${UNKNOWN}/client-credentials`),
      await admin.get(`/api/agents/${UNKNOWN}/client-credentials`),
      await admin.delete(`/api/agents/${UNKNOWN}/client-credentials`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.json<{ error: string }>().error).toBe('agent not found');
    }
  });

  it('never logs a generated secret', async () => {
    const agent = await newAgent();
    const secrets = [];
    for (let i = 0; i < 3; i += 1)
      secrets.push(
        (await admin.post(`/api/agents/${agent}/client-credentials`)).json<{ client_secret: string }>().client_secret,
      );
    expect(broker.logs.leaked(secrets)).toEqual([]);
  });
});
