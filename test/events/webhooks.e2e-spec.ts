import { fork } from 'node:child_process';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CibaRequests } from '@broker/approvals';
import { type AnyBrokerEvent, type EventType } from '@broker/events';
import { EventRepository } from '@broker/persistence';
import {
  eventually,
  ApiClient,
  createPostgresDatabase,
  FrozenClock,
  http,
  postgresServerUrl,
  startGatewayFixture,
  startTestBroker,
  testBackends,
  testKey,
  type GatewayFixture,
  type TestBroker,
} from '@broker/testing';
import { WebhookDeliveryWorker } from '@broker/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

/** One request the receiver got. */
interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A webhook receiver on loopback: records every request and answers the next queued status (200 when none is queued). */
interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Statuses for the next requests, in order. */
  readonly answers: number[];
  forEvent(eventId: string): Received[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers: number[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answers.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answers,
    forEvent: (eventId) => received.filter((r) => r.headers['webhook-id'] === eventId),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A Standard Webhooks verifier written from the specification, independent of the broker's
 * signer: the key is the secret's base64 after `whsec_`; the header lists space-separated
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` signatures, one must match.
 */
function verifies(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, signature] = entry.split(',');
      const given = Buffer.from(signature ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

interface WebhookAnswer {
  id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  secret?: string;
}

interface DeliveryAnswer {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
}

/** Records one event through the ledger's own append (what the instrumented actions call). */
async function record(
  broker: TestBroker,
  clock: FrozenClock | undefined,
  type: EventType = 'agent.deleted',
): Promise<string> {
  const id = randomUUID();
  const event = {
    type,
    actor: { type: 'admin', id: 'admin@example.com' },
    principal: null,
    agentId: randomUUID(),
    serviceId: null,
    outcome: 'success',
    traceId: null,
    details: {},
  } as AnyBrokerEvent;
  await broker.broker
    .server('enduser')
    .app.get(EventRepository)
    .append([{ id, occurredAt: clock?.now() ?? new Date(), event }]);
  return id;
}

function workerOf(broker: TestBroker): WebhookDeliveryWorker {
  return broker.broker.server('enduser').app.get(WebhookDeliveryWorker);
}

async function deliveriesOf(admin: ApiClient, webhookId: string): Promise<DeliveryAnswer[]> {
  const response = await admin.get(`/api/webhooks/${webhookId}/deliveries`);
  expect(response.status).toBe(200);
  return response.json<DeliveryAnswer[]>();
}

async function deliveryOf(admin: ApiClient, webhookId: string, eventId: string): Promise<DeliveryAnswer> {
  const delivery = (await deliveriesOf(admin, webhookId)).find((d) => d.event_id === eventId);
  if (delivery === undefined) throw new Error(`no delivery of event ${eventId}`);
  return delivery;
}

const LOOPBACK = { events: { webhooks: { allowed_networks: ['127.0.0.0/8'] } } };

/**
 * Every broker this file started (a restart starts another) and every secret and receiver
 * URL (a URL may carry a receiver's token in real life): all logs are searched for all of
 * them, since Nest's Logger (the worker's) writes to the process's first broker's log.
 */
const brokers: TestBroker[] = [];
const secrets: string[] = [];

describe.each(testBackends())('webhooks on $name', (backend) => {
  let receiver: Receiver;
  let storage: Record<string, unknown>;
  let dataDir: string | undefined;
  const keys = {
    encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
    third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
  };
  const clock = new FrozenClock('2026-03-01T12:00:00.000Z');
  let broker: TestBroker;
  let admin: ApiClient;
  let webhook: WebhookAnswer;

  /** A broker on this describe's database (a restart keeps it), with the frozen clock. */
  const start = async (config: Record<string, unknown>): Promise<TestBroker> => {
    const started = await startTestBroker({ servers: BOTH_SERVERS, clock, config: { ...keys, ...config, storage } });
    brokers.push(started);
    return started;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    // PGlite: a data directory on disk, so a restarted broker opens the same database.
    if (backend.name === 'pglite') {
      dataDir = mkdtempSync(join(tmpdir(), 'webhooks-'));
      storage = { backend: 'pglite', pglite: { data_dir: dataDir } };
    } else {
      storage = await backend.storage();
    }
    broker = await start(LOOPBACK);
    admin = new ApiClient(broker.url('admin'));
  });

  afterAll(async () => {
    await broker?.stop();
    await receiver?.close();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the secret once, and signs each delivery so a Standard Webhooks verifier accepts it with that secret', async () => {
    const created = await admin.post('/api/webhooks', {
      url: receiver.url,
      event_types: ['agent.deleted', 'approval.requested'],
      enabled: true,
    });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    webhook = created.json<WebhookAnswer>();
    secrets.push(webhook.secret ?? '', receiver.url);
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await admin.get(`/api/webhooks/${webhook.id}`);
    expect(read.json()).toEqual({
      id: webhook.id,
      url: receiver.url,
      event_types: ['agent.deleted', 'approval.requested'],
      enabled: true,
      created_at: expect.any(String) as string,
      updated_at: expect.any(String) as string,
    });
    expect(JSON.stringify((await admin.get('/api/webhooks')).json())).not.toContain(webhook.secret);

    const eventId = await record(broker, clock);
    // A kind the webhook does not subscribe to gets no delivery.
    const other = await record(broker, clock, 'agent.created');
    await workerOf(broker).deliverNow();

    const [request, ...more] = receiver.forEvent(eventId);
    expect(more).toHaveLength(0);
    expect(receiver.forEvent(other)).toHaveLength(0);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-timestamp']).toBe(String(clock.nowMs() / 1000));
    expect(verifies(webhook.secret as string, request?.headers ?? {}, request?.body ?? '')).toBe(true);
    // Any change to the body breaks the signature.
    expect(verifies(webhook.secret as string, request?.headers ?? {}, `${request?.body ?? ''} `)).toBe(false);
    const payload = JSON.parse(request?.body ?? '{}') as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    expect(payload).toMatchObject({
      type: 'agent.deleted',
      timestamp: clock.now().toISOString(),
      data: {
        id: eventId,
        type: 'agent.deleted',
        occurred_at: clock.now().toISOString(),
        actor: { type: 'admin', id: 'admin@example.com' },
        outcome: 'success',
        details: {},
      },
    });
    expect(await deliveryOf(admin, webhook.id, eventId)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_status: 200,
      last_error: null,
      next_attempt_at: null,
      delivered_at: clock.now().toISOString(),
    });
  });

  it('signs with the rotated secret from the rotation on, never with the old one', async () => {
    const rotated = await admin.post(`/api/webhooks/${webhook.id}/secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const secret = rotated.json<WebhookAnswer>().secret as string;
    expect(secret).not.toBe(webhook.secret);
    secrets.push(secret);
    const eventId = await record(broker, clock);
    await workerOf(broker).deliverNow();
    const [request] = receiver.forEvent(eventId);
    expect(verifies(secret, request?.headers ?? {}, request?.body ?? '')).toBe(true);
    expect(verifies(webhook.secret as string, request?.headers ?? {}, request?.body ?? '')).toBe(false);
    webhook = { ...webhook, secret };
  });

  it('retries a receiver answering 500 twice, then 200, after growing delays (frozen clock), with the same event and a valid signature each time', async () => {
    receiver.answers.push(500, 500);
    const eventId = await record(broker, clock);
    const worker = workerOf(broker);
    await worker.deliverNow();
    const first = await deliveryOf(admin, webhook.id, eventId);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, last_status: 500, last_error: 'answered 500' });
    const firstDelay = Date.parse(first.next_attempt_at as string) - clock.nowMs();
    expect(firstDelay).toBeGreaterThan(0);

    // Not due a millisecond early.
    clock.advance(firstDelay - 1);
    await worker.deliverNow();
    expect(receiver.forEvent(eventId)).toHaveLength(1);
    clock.advance(1);
    await worker.deliverNow();
    const second = await deliveryOf(admin, webhook.id, eventId);
    expect(second).toMatchObject({ status: 'pending', attempts: 2, last_status: 500 });
    const secondDelay = Date.parse(second.next_attempt_at as string) - clock.nowMs();
    expect(secondDelay).toBeGreaterThan(firstDelay);

    clock.advance(secondDelay);
    await worker.deliverNow();
    expect(await deliveryOf(admin, webhook.id, eventId)).toMatchObject({
      status: 'delivered',
      attempts: 3,
      last_status: 200,
      last_error: null,
    });
    const requests = receiver.forEvent(eventId);
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    for (const request of requests)
      expect(verifies(webhook.secret as string, request.headers, request.body)).toBe(true);
    // Each attempt is stamped with its own time.
    expect(requests.map((r) => Number(r.headers['webhook-timestamp']))).toEqual(
      [0, firstDelay, firstDelay + secondDelay].map((d) =>
        Math.floor((clock.nowMs() - firstDelay - secondDelay + d) / 1000),
      ),
    );
  });

  it('marks a delivery failed once events.webhooks.retry_for (24 h) has passed, visible in the admin API', async () => {
    receiver.answers.push(503, 503);
    const eventId = await record(broker, clock);
    const worker = workerOf(broker);
    await worker.deliverNow();
    clock.advance(24 * 3_600_000);
    await worker.deliverNow();
    expect(await deliveryOf(admin, webhook.id, eventId)).toMatchObject({
      status: 'failed',
      attempts: 2,
      last_status: 503,
      last_error: 'answered 503',
      next_attempt_at: null,
      delivered_at: null,
    });
    // Failed for good: no further attempt.
    clock.advance(3_600_000);
    await worker.deliverNow();
    expect(receiver.forEvent(eventId)).toHaveLength(2);
  });

  it('loses nothing when the broker restarts in the middle of the retries', async () => {
    receiver.answers.push(500);
    const eventId = await record(broker, clock);
    await workerOf(broker).deliverNow();
    expect((await deliveryOf(admin, webhook.id, eventId)).status).toBe('pending');
    await broker.stop();

    broker = await start(LOOPBACK);
    admin = new ApiClient(broker.url('admin'));
    clock.advance(5_000);
    await workerOf(broker).deliverNow();
    expect(await deliveryOf(admin, webhook.id, eventId)).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_status: 200,
    });
    expect(receiver.forEvent(eventId)).toHaveLength(2);
  });

  it('refuses a URL that is or resolves to a loopback, private or link-local address unless allowed, at creation and at delivery', async () => {
    // Allowed: the loopback network is in events.webhooks.allowed_networks (every test above delivered to it).
    expect(
      (
        await admin.post('/api/webhooks', {
          url: receiver.url.replace('http:', 'https:'),
          event_types: ['agent.deleted'],
          enabled: false,
        })
      ).status,
    ).toBe(201);
    // Not allowed, even with the loopback allowed: private and link-local networks, http outside the allowed networks.
    for (const url of [
      'https://10.0.0.8/hooks',
      'https://169.254.169.254/latest',
      'https://[fe80::1]/hooks',
      'http://93.184.215.14/hooks',
      'ftp://127.0.0.1/hooks',
      'https://user:pw@127.0.0.1/hooks',
    ]) {
      const refused = await admin.post('/api/webhooks', { url, event_types: ['agent.deleted'], enabled: true });
      expect(refused.status, url).toBe(400);
      expect(refused.json()).toMatchObject({ error: 'validation failed' });
    }
    await broker.stop();

    // The same database, a broker that allows no special-use network.
    broker = await start({});
    admin = new ApiClient(broker.url('admin'));
    for (const url of [
      receiver.url,
      receiver.url.replace('http:', 'https:'),
      receiver.url.replace('127.0.0.1', 'localhost').replace('http:', 'https:'),
    ]) {
      const refused = await admin.post('/api/webhooks', { url, event_types: ['agent.deleted'], enabled: true });
      expect(refused.status, url).toBe(400);
      expect(refused.json<{ message: string }>().message).toMatch(/^url /);
    }
    // The webhook created while loopback was allowed: the address guard refuses it at delivery.
    const eventId = await record(broker, clock);
    await workerOf(broker).deliverNow();
    expect(receiver.forEvent(eventId)).toHaveLength(0);
    const refused = await deliveryOf(admin, webhook.id, eventId);
    expect(refused).toMatchObject({ status: 'pending', attempts: 1, last_status: null });
    expect(refused.last_error).toMatch(/^forbidden_address: /);
  });

  it('answers 404 for an unknown webhook, and a deleted webhook takes its deliveries with it', async () => {
    const unknown = randomUUID();
    for (const response of [
      await admin.get(`/api/webhooks/${unknown}`),
      await admin.get(`/api/webhooks/${unknown}/deliveries`),
      await admin.post(`/api/webhooks/${unknown}/secret`),
      await admin.delete(`/api/webhooks/${unknown}`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.json()).toMatchObject({ error: 'not_found' });
    }
    // This broker allows no special-use network: the loopback URL is refused on replacement too, a public https one is not.
    expect(
      (
        await admin.put(`/api/webhooks/${webhook.id}`, {
          url: webhook.url,
          event_types: ['agent.created'],
          enabled: false,
        })
      ).status,
    ).toBe(400);
    const replaced = await admin.put(`/api/webhooks/${webhook.id}`, {
      url: 'https://93.184.215.14/hooks',
      event_types: ['agent.created'],
      enabled: false,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.json()).toMatchObject({
      url: 'https://93.184.215.14/hooks',
      event_types: ['agent.created'],
      enabled: false,
    });
    expect(replaced.json()).not.toHaveProperty('secret');
    expect((await admin.delete(`/api/webhooks/${webhook.id}`)).status).toBe(204);
    expect((await admin.get(`/api/webhooks/${webhook.id}/deliveries`)).status).toBe(404);
    const [row] = await broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1',
      [webhook.id],
    );
    expect(row?.n).toBe(0);
  });

  it('never logs a webhook secret or URL, and stores the secret only sealed', async () => {
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    // Failed attempts were logged above (500s, 503s, the refused address): with ids and reasons only.
    expect(
      brokers.flatMap((b) => b.logs.records()).filter((r) => String(r.msg).startsWith('webhooks: delivery')).length,
    ).toBeGreaterThan(0);
    for (const started of brokers) expect(started.logs.leaked(secrets)).toEqual([]);
    const created = (
      await admin.post('/api/webhooks', {
        url: 'https://93.184.215.14/hooks',
        event_types: ['agent.deleted'],
        enabled: false,
      })
    ).json<WebhookAnswer>();
    const key = Buffer.from((created.secret as string).slice('whsec_'.length), 'base64');
    const [row] = await broker.broker.runtime.database.dataSource.query<{ envelope: Buffer }[]>(
      'SELECT secret_envelope AS envelope FROM webhooks WHERE id = $1',
      [created.id],
    );
    expect(row?.envelope.includes(key)).toBe(false);
    expect(row?.envelope.toString('latin1')).not.toContain(created.secret);
  });
});

describe.each(testBackends())(
  'a real approval request posted to a webhook on $name (the first use: waiting approvals to chat)',
  (backend) => {
    const ALICE = 'alice@example.com';
    let receiver: Receiver;
    let fixture: GatewayFixture;

    beforeAll(async () => {
      receiver = await startReceiver();
      fixture = await startGatewayFixture({
        servers: BOTH_SERVERS,
        backend,
        subjectAudience: 'gateway',
        config: LOOPBACK,
      });
      brokers.push(fixture.broker);
    });

    afterAll(async () => {
      await fixture?.stop();
      await receiver?.close();
    });

    it("delivers approval.requested, signed, with the tool name and the arguments' names and hash, never their values", async () => {
      const admin = new ApiClient(fixture.broker.url('admin'));
      const webhook = (
        await admin.post('/api/webhooks', { url: receiver.url, event_types: ['approval.requested'], enabled: true })
      ).json<WebhookAnswer>();
      secrets.push(webhook.secret ?? '');
      const registry = await createRegistry(admin);
      expect(
        (
          await new ApiClient(fixture.base, ALICE).post(`/api/consent/agents/${registry.agent}/grants`, {
            granted_permission_sets: { [registry.readMail]: [registry.mail] },
            valid_until: '2099-01-01T00:00:00Z',
          })
        ).status,
      ).toBe(201);
      const headers = {
        'content-type': 'application/json',
        authorization: `Bearer ${await fixture.subjectToken(ALICE, registry.agent)}`,
        'x-client-assertion': await fixture.assertion(),
      };
      const secretArgument = 'the-quarterly-numbers.xlsx';
      const created = await http(`${fixture.base}/api/approvals`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          metadata: {},
          tool_name: 'send_file',
          arguments: { path: secretArgument },
          risk_level: 'critical',
        }),
      });
      expect(created.status, created.text).toBe(201);
      const approvalId = created.json<{ data: { id: string } }>().data.id;

      await workerOf(fixture.broker).deliverNow();
      const [request, ...more] = receiver.received;
      expect(more).toHaveLength(0);
      expect(verifies(webhook.secret as string, request?.headers ?? {}, request?.body ?? '')).toBe(true);
      const payload = JSON.parse(request?.body ?? '{}') as {
        type: string;
        data: { id: string; principal: string; agent_id: string; details: Record<string, unknown> };
      };
      expect(payload).toMatchObject({
        type: 'approval.requested',
        data: {
          id: request?.headers['webhook-id'],
          principal: ALICE,
          agent_id: registry.agent,
          details: {
            approval_id: approvalId,
            tool_name: 'send_file',
            risk_level: 'critical',
            argument_names: ['path'],
          },
        },
      });
      expect(payload.data.details.arguments_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(request?.body).not.toContain(secretArgument);
    });

    it('delivers the events of a CIBA request (docs/approvals.md "Requests from CIBA"): requested by the agent, and answered at once by a remembered decision, named', async () => {
      const admin = new ApiClient(fixture.broker.url('admin'));
      const webhook = (
        await admin.post('/api/webhooks', {
          url: receiver.url,
          event_types: ['approval.requested', 'approval.approved'],
          enabled: true,
        })
      ).json<WebhookAnswer>();
      secrets.push(webhook.secret ?? '');
      const registry = await createRegistry(admin);
      const alice = new ApiClient(fixture.base, ALICE);
      expect(
        (
          await alice.post(`/api/consent/agents/${registry.agent}/grants`, {
            granted_permission_sets: { [registry.readMail]: [registry.mail] },
          })
        ).status,
      ).toBe(201);
      const ciba = fixture.broker.broker.server('enduser').app.get(CibaRequests);
      const secretArgument = 'invoice-4711-for-acme.pdf';
      const ask = async (): Promise<string> => {
        const args = { path: secretArgument };
        const outcome = await ciba.request({
          principal: ALICE,
          agentId: registry.agent,
          requester: 'agent',
          detail: {
            tool: 'send_file',
            arguments: args,
            risk: 'critical',
            json: JSON.stringify({
              type: 'urn:agent-identity-broker:tool-call',
              locations: ['https://mcp.example.com/mcp'],
              tool: 'send_file',
              arguments: args,
              risk: 'critical',
            }),
          },
          bindingMessage: 'GREEN-3',
          scopes: [],
          expiresInMs: 300_000,
          intervalMs: 5_000,
        });
        if (outcome.kind !== 'created') throw new Error(JSON.stringify(outcome));
        return outcome.approvalId;
      };
      const first = await ask();
      expect((await alice.post(`/api/approvals/${first}/approve`, { persistence: 'permanent' })).status).toBe(200);
      const second = await ask();
      const before = receiver.received.length;
      await workerOf(fixture.broker).deliverNow();
      // This webhook's deliveries: the one of the test above gets approval.requested too, signed with its own secret.
      const mine = receiver.received
        .slice(before)
        .filter((request) => verifies(webhook.secret as string, request.headers, request.body));
      expect(mine.length).toBeGreaterThanOrEqual(4);
      const payloads = mine.map((request) => {
        expect(request.body).not.toContain(secretArgument);
        expect(request.body).not.toContain('GREEN-3');
        return JSON.parse(request.body) as {
          type: string;
          data: { actor: { type: string; id: string | null }; details: Record<string, unknown> };
        };
      });
      const of = (id: string, type: string) =>
        payloads.filter((payload) => payload.type === type && payload.data.details.approval_id === id);
      expect(of(first, 'approval.requested').map((payload) => payload.data.actor)).toEqual([
        { type: 'agent', id: registry.agent },
      ]);
      expect(of(first, 'approval.approved').map((payload) => payload.data.actor)).toEqual([
        { type: 'principal', id: ALICE },
      ]);
      expect(of(second, 'approval.requested')).toHaveLength(1);
      const answered = of(second, 'approval.approved');
      expect(answered.map((payload) => payload.data.actor)).toEqual([{ type: 'broker', id: null }]);
      expect(answered[0]?.data.details).toMatchObject({ persistence: 'once', remembered_approval_id: first });
    });
  },
);

describe.runIf(postgresServerUrl())('webhooks in two broker processes on one PostgreSQL', () => {
  const keys = {
    encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
    third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
  };
  let storage: Record<string, unknown>;
  let receiver: Receiver;
  let broker: TestBroker;

  beforeAll(async () => {
    receiver = await startReceiver();
    storage = { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } };
    broker = await startTestBroker({ servers: BOTH_SERVERS, config: { ...keys, ...LOOPBACK, storage } });
  });

  afterAll(async () => {
    await broker?.stop();
    await receiver?.close();
  });

  it('delivers each of 120 events once, shared by both processes’ workers', async () => {
    const admin = new ApiClient(broker.url('admin'));
    const webhook = (
      await admin.post('/api/webhooks', { url: receiver.url, event_types: ['agent.deleted'], enabled: true })
    ).json<WebhookAnswer>();
    // The second process: the end-user server only (compiled dist/), same database and keys, delivering on its own.
    const replica = fork('test/support/webhook-replica.mjs', [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const exited = new Promise((resolve) => replica.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      replica.once('error', reject);
      replica.once('exit', (code) => reject(new Error(`the replica exited (${code}) before it was ready`)));
      replica.once('message', () => resolve());
      replica.send({ config: { ...keys, ...LOOPBACK, storage, server: { enduser: { port: 0 }, admin: { port: 0 } } } });
    });
    const events: string[] = [];
    for (let i = 0; i < 120; i += 1) events.push(await record(broker, undefined));
    const database = broker.broker.runtime.database.dataSource;
    await eventually(async () => {
      const [row] = await database.query<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'",
        [webhook.id],
      );
      return row?.n === events.length;
    });
    const replicaDelivered = await new Promise<number>((resolve) => {
      replica.once('message', (message: { delivered: number }) => resolve(message.delivered));
      replica.send({ stop: true });
    });
    await exited;
    for (const eventId of events) expect(receiver.forEvent(eventId), eventId).toHaveLength(1);
    expect(receiver.received).toHaveLength(events.length);
    // Each process counts what its own worker delivered: together, every event once.
    expect(workerOf(broker).totals.delivered + replicaDelivered).toBe(events.length);
  });
});
