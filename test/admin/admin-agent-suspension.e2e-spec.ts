import { ApiClient, startTestBroker, testBackends, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const ADMIN = 'admin@example.com';
const OTHER_ADMIN = 'bob@example.com';

interface Suspension {
  suspended_at: string;
  suspended_by: string;
  reason: string | null;
}

interface LedgerItem {
  type: string;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  principal: string | null;
  details: Record<string, unknown>;
}

// docs/admin-api.md "Suspending an agent": the admin API's suspension routes and the agent answers.
describe.each(testBackends())('admin: suspending an agent on $name', (backend) => {
  let broker: TestBroker;
  let admin: ApiClient;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { storage: await backend.storage() } });
    admin = new ApiClient(broker.url('admin'), ADMIN);
  });

  afterAll(async () => {
    await broker.stop();
  });

  const newAgent = async (name: string): Promise<string> => {
    const created = await admin.post('/api/agents', { display_name: name });
    expect(created.status, created.text).toBe(201);
    return created.json<{ id: string }>().id;
  };

  const ledger = async (agentId: string): Promise<LedgerItem[]> => {
    const read = await admin.get(`/api/events?agent_id=${agentId}&type=agent.suspended,agent.resumed`);
    expect(read.status, read.text).toBe(200);
    return read.json<{ items: LedgerItem[] }>().items;
  };

  it('suspends (200 with the suspension), shows it on every agent answer, and resumes (204)', async () => {
    const id = await newAgent('Expense assistant');
    const before = Date.now();
    const suspended = await admin.put(`/api/agents/${id}/suspension`, {
      reason: 'Credentials leaked in a public repository',
    });
    expect(suspended.status, suspended.text).toBe(200);
    const suspension = suspended.json<Suspension>();
    expect(Object.keys(suspension).sort()).toEqual(['reason', 'suspended_at', 'suspended_by']);
    expect(suspension).toMatchObject({ suspended_by: ADMIN, reason: 'Credentials leaked in a public repository' });
    expect(new Date(suspension.suspended_at).toISOString()).toBe(suspension.suspended_at);
    expect(new Date(suspension.suspended_at).getTime()).toBeGreaterThanOrEqual(before - 1000);

    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension });
    const listed = (await admin.get('/api/agents')).json<{ id: string; suspension: unknown }[]>();
    expect(listed.find((agent) => agent.id === id)?.suspension).toEqual(suspension);
    const read = await admin.get(`/api/agents/${id}/suspension`);
    expect(read.status, read.text).toBe(200);
    expect(read.json()).toEqual(suspension);
    // A PUT of the agent keeps the suspension: it is no field of the agent's body.
    const replaced = await admin.put(`/api/agents/${id}`, { display_name: 'Expense assistant (renamed)' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.json()).toMatchObject({ display_name: 'Expense assistant (renamed)', suspension });

    const resumed = await admin.delete(`/api/agents/${id}/suspension`);
    expect(resumed.status, resumed.text).toBe(204);
    expect(resumed.text).toBe('');
    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension: null });
    const gone = await admin.get(`/api/agents/${id}/suspension`);
    expect(gone.status, gone.text).toBe(404);
    expect(gone.json()).toEqual({ error: 'not_found', message: `agent ${id} is not suspended` });
  });

  it('keeps the original suspension when suspended again, by anyone, with any reason', async () => {
    const id = await newAgent('Calendar assistant');
    const first = (await admin.put(`/api/agents/${id}/suspension`, { reason: 'first' })).json<Suspension>();
    const again = await admin.as(OTHER_ADMIN).put(`/api/agents/${id}/suspension`, { reason: 'second' });
    expect(again.status, again.text).toBe(200);
    expect(again.json()).toEqual(first);
    expect((await ledger(id)).map((event) => event.type)).toEqual(['agent.suspended']);
  });

  it('takes no body, an empty one, a null or blank reason as no reason', async () => {
    for (const body of [undefined, {}, { reason: null }, { reason: '   ' }]) {
      const id = await newAgent('No reason');
      const suspended = await admin.put(`/api/agents/${id}/suspension`, body);
      expect(suspended.status, suspended.text).toBe(200);
      expect(suspended.json()).toMatchObject({ suspended_by: ADMIN, reason: null });
    }
  });

  it('resuming an agent that is not suspended is 204 and records nothing', async () => {
    const id = await newAgent('Never suspended');
    const resumed = await admin.delete(`/api/agents/${id}/suspension`);
    expect(resumed.status, resumed.text).toBe(204);
    expect(await ledger(id)).toEqual([]);
  });

  it('records agent.suspended and agent.resumed by the administrator, with the reason', async () => {
    const id = await newAgent('Evented');
    await admin.put(`/api/agents/${id}/suspension`, { reason: 'Incident 7' });
    expect((await admin.as(OTHER_ADMIN).delete(`/api/agents/${id}/suspension`)).status).toBe(204);
    const [resumed, suspended] = await ledger(id);
    expect(suspended).toMatchObject({
      type: 'agent.suspended',
      actor: { type: 'admin', id: ADMIN },
      agent_id: id,
      principal: null,
      details: { reason: 'Incident 7' },
    });
    expect(resumed).toMatchObject({
      type: 'agent.resumed',
      actor: { type: 'admin', id: OTHER_ADMIN },
      agent_id: id,
      principal: null,
      details: { reason: 'Incident 7' },
    });
  });

  it('answers 404 agent not found for an unknown agent on every route', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const response of [
      await admin.put(`/api/agents/${unknown}/suspension`, {}),
      await admin.get(`/api/agents/${unknown}/suspension`),
      await admin.delete(`/api/agents/${unknown}/suspension`),
    ]) {
      expect(response.status, response.text).toBe(404);
      expect(response.json()).toEqual({ error: 'agent not found', message: `no agent ${unknown}` });
    }
  });

  it('refuses a reason over 500 characters, an unknown field, and suspension in an agent body', async () => {
    const id = await newAgent('Validated');
    const long = await admin.put(`/api/agents/${id}/suspension`, { reason: 'x'.repeat(501) });
    expect(long.status, long.text).toBe(400);
    expect(long.json()).toMatchObject({ error: 'validation failed', details: [{ field: 'reason' }] });
    const unknown = await admin.put(`/api/agents/${id}/suspension`, { reason: 'ok', until: 'tomorrow' });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'invalid request body' });
    const inBody = await admin.put(`/api/agents/${id}`, { display_name: 'Validated', suspension: null });
    expect(inBody.status, inBody.text).toBe(400);
    expect(inBody.json()).toMatchObject({ error: 'invalid request body' });
    const created = await admin.post('/api/agents', {
      display_name: 'Suspended at birth',
      suspension: { suspended_at: new Date().toISOString(), suspended_by: ADMIN, reason: null },
    });
    expect(created.status, created.text).toBe(400);
    expect(created.json()).toMatchObject({ error: 'invalid request body' });
    expect((await admin.get(`/api/agents/${id}`)).json()).toMatchObject({ suspension: null });
  });
});
