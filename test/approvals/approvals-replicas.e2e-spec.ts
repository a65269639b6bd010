import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  eventually,
  BrokerProcess,
  createPostgresDatabase,
  http,
  postgresServerUrl,
  startJwtIssuer,
  testKey,
  writeConfigFile,
  type HttpResponse,
  type TestJwtIssuer,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantedAgent } from '../support/granted-agent';

const ALICE = 'alice@example.com';
/** The broker's public URL as both replicas are configured (the audience of the gateway's assertions). */
const PUBLIC_URL = 'http://broker.replicas.test';

/**
 * Two broker processes on one PostgreSQL. The version counter lives in the
 * database; each process holds one LISTEN connection, so an approval decided on one replica
 * wakes the long-poll held by the other.
 */
describe.runIf(postgresServerUrl())('approvals across broker processes on one PostgreSQL', () => {
  let issuer: TestJwtIssuer;
  const replicas: BrokerProcess[] = [];
  const urls: Record<string, string>[] = [];

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    const { file } = writeConfigFile({
      server: { enduser: { port: 0, public_url: PUBLIC_URL }, admin: { port: 0 }, shutdown: { timeout: '30s' } },
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
      token_exchange: {
        client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri },
        subject_token: { audience: 'gateway' },
      },
    });
    for (let i = 0; i < 2; i += 1) {
      const replica = new BrokerProcess('broker', ['--config', file]);
      replicas.push(replica);
      urls.push(await replica.listening(['enduser', 'admin']));
    }
  });

  afterAll(async () => {
    for (const replica of replicas) {
      replica.signal('SIGTERM');
      await replica.exited;
    }
    await issuer?.stop();
  });

  const assertion = () => issuer.sign({ sub: 'gateway', jti: randomUUID() }, { audience: PUBLIC_URL });
  /** A replica's own count of held long-polls and of long-polls woken by a change, from its `/metrics`. */
  const longPolls = async (replica: number): Promise<{ held: number; woken: number }> => {
    const text = (await http(`${urls[replica]?.admin}/metrics`)).text;
    const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    return { held: value('broker_approval_waiters'), woken: value('broker_approval_wakeups_total') };
  };
  const holding = (replica: number, count: number) =>
    eventually(
      () => longPolls(replica),
      (now) => now.held === count,
      { waitingFor: `replica ${replica} holding ${count} long-poll(s)` },
    );

  const sync = async (replica: number, headers: Record<string, string> = {}): Promise<HttpResponse> =>
    http(`${urls[replica]?.enduser}/api/approvals?principal=${encodeURIComponent(ALICE)}`, {
      headers: { 'x-client-assertion': await assertion(), ...headers },
    });

  it('wakes a waiter held on replica B when an approval is decided on replica A, and the other way round', async () => {
    const [a, b] = urls as [Record<string, string>, Record<string, string>];
    const agent = (await grantedAgent({ admin: a.admin as string, enduser: a.enduser as string }, [ALICE], 'Agent')).id;
    const created = await http(`${a.enduser}/api/approvals`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await issuer.sign({ sub: ALICE, azp: agent }, { audience: 'gateway' })}`,
        'x-client-assertion': await assertion(),
      },
      body: JSON.stringify({ metadata: {}, tool_name: 'deploy', arguments: { env: 'prod' } }),
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json<{ data: { id: string } }>().data.id;

    const before = await sync(1);
    expect(
      before.json<{ data: { pairs: { approvals: { id: string; status: string }[] }[] } }>().data.pairs[0]?.approvals,
    ).toEqual([expect.objectContaining({ id, status: 'pending' })]);
    let answered = false;
    const waiting = sync(1, { 'if-none-match': before.headers.etag as string, 'x-long-poll-timeout': '60' }).finally(
      () => {
        answered = true;
      },
    );
    // B holds the request: its own count says so, and it has not answered.
    const heldOnB = await holding(1, 1);
    expect(answered).toBe(false);

    const approved = await new ApiClient(a.enduser as string, ALICE).post(`/api/approvals/${id}/approve`, {
      persistence: 'once',
    });
    expect(approved.status).toBe(200);
    const response = await waiting;
    // Woken by the change (a 200 with the new state, counted as a wake-up on B), not by its 60 s timeout (a 304).
    expect(response.status).toBe(200);
    expect(response.headers.etag).not.toBe(before.headers.etag);
    expect(
      response.json<{ data: { pairs: { approvals: { id: string; status: string }[] }[] } }>().data.pairs[0]?.approvals,
    ).toEqual([expect.objectContaining({ id, status: 'approved' })]);
    expect((await longPolls(1)).woken).toBe(heldOnB.woken + 1);

    // And the other way round: consumed through B, A's waiter wakes.
    const onA = await sync(0);
    const waitingOnA = sync(0, { 'if-none-match': onA.headers.etag as string, 'x-long-poll-timeout': '60' });
    const heldOnA = await holding(0, 1);
    const consumed = await http(`${b.enduser}/api/approvals/${id}/consume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await issuer.sign({ sub: ALICE, azp: agent }, { audience: 'gateway' })}` },
    });
    expect(consumed.status).toBe(200);
    const woken = await waitingOnA;
    expect(woken.status).toBe(200);
    expect((await longPolls(0)).woken).toBe(heldOnA.woken + 1);
    expect(woken.json<{ data: { pairs: unknown[] } }>().data.pairs).toEqual([]);
  });

  it("ends the pair's approvals on every replica when the grant is revoked on one: B refuses the next create at once, B's waiter sees them leave", async () => {
    const [a, b] = urls as [Record<string, string>, Record<string, string>];
    const agent = await grantedAgent({ admin: a.admin as string, enduser: a.enduser as string }, [ALICE], 'Agent');
    const create = async (replica: Record<string, string>, tool: string): Promise<HttpResponse> =>
      http(`${replica.enduser}/api/approvals`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await issuer.sign({ sub: ALICE, azp: agent.id }, { audience: 'gateway' })}`,
          'x-client-assertion': await assertion(),
        },
        body: JSON.stringify({ metadata: {}, tool_name: tool, arguments: { env: 'prod' } }),
      });
    const pendingId = (await create(b, 'deploy')).json<{ data: { id: string } }>().data.id;
    const remembered = (await create(b, 'restart')).json<{ data: { id: string } }>().data.id;
    const alice = new ApiClient(b.enduser as string, ALICE);
    expect((await alice.post(`/api/approvals/${remembered}/approve`, { persistence: 'permanent' })).status).toBe(200);
    const pairOf = (response: HttpResponse) =>
      response
        .json<{ data: { pairs: { agent_id: string; approvals: { id: string }[] }[] } }>()
        .data.pairs.find((pair) => pair.agent_id === agent.id);
    const before = await sync(1);
    expect(
      pairOf(before)
        ?.approvals.map((x) => x.id)
        .sort(),
    ).toEqual([pendingId, remembered].sort());
    const waiting = sync(1, { 'if-none-match': before.headers.etag as string, 'x-long-poll-timeout': '60' });
    const heldOnB = await holding(1, 1);

    await agent.revoke(ALICE);

    const response = await waiting;
    expect(response.status).toBe(200);
    expect(pairOf(response)).toBeUndefined();
    expect((await longPolls(1)).woken).toBe(heldOnB.woken + 1);
    const refused = await create(b, 'deploy');
    expect(refused.status, refused.text).toBe(403);
    expect(refused.json<{ error: string }>().error).toBe('grant_required');
    for (const id of [pendingId, remembered])
      expect((await alice.get(`/api/approvals/${id}`)).json<{ data: { status: string } }>().data.status).toBe(
        'revoked',
      );
  });

  it('answers a held waiter at once on SIGTERM (304, connection closing) and exits 0', async () => {
    const current = await sync(1);
    const held = sync(1, { 'if-none-match': current.headers.etag as string, 'x-long-poll-timeout': '120' });
    await holding(1, 1);
    const replica = replicas[1] as BrokerProcess;
    replica.signal('SIGTERM');
    const response = await held;
    expect(response.status).toBe(304);
    expect(response.headers.connection).toBe('close');
    expect((await replica.exited).code).toBe(0);
    expect(replica.stdout.join('\n')).not.toContain('shutdown timeout reached');
  });
});
