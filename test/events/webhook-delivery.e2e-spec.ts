import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, Random } from '@broker/domain';
import { type AnyBrokerEvent, type EventType } from '@broker/events';
import { EventRepository, WebhookDeliveryRepository } from '@broker/persistence';
import {
  eventually,
  ApiClient,
  FrozenClock,
  startTestBroker,
  testBackends,
  testKey,
  type TestBroker,
} from '@broker/testing';
import { WebhookDeliveryRetention, WebhookDeliveryWorker } from '@broker/webhooks';
import { WebhookSecrets } from '@broker/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';
import { HangingReceiver } from '../support/webhook-receiver';

/**
 * Webhook delivery under a slow or hung receiver (README "Webhooks", "Security"): one
 * receiver's backlog never delays another's deliveries, a stop aborts the attempts in flight
 * and releases them, two workers never attempt one delivery at the same time, and finished
 * deliveries are purged after `events.webhooks.delivery_retention`. The hung receiver never
 * answers while it holds; the attempt timeout is long (2 minutes), so only the worker's own
 * rules end an attempt early.
 */
const TIMEOUT_MS = 120_000;
/** A claim's lease: the attempt timeout and the worker's 30 s margin. */
const LEASE_MS = TIMEOUT_MS + 30_000;
const WEBHOOKS = { events: { webhooks: { allowed_networks: ['127.0.0.0/8'], timeout: `${TIMEOUT_MS / 1000}s` } } };

interface DeliveryAnswer {
  event_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
}

describe.each(testBackends())('webhook delivery with a hung receiver on $name', (backend) => {
  const keys = {
    encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
    third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
  };
  const clock = new FrozenClock('2026-03-01T12:00:00.000Z');
  let storage: Record<string, unknown>;
  let dataDir: string | undefined;
  let broker: TestBroker;
  let admin: ApiClient;
  let hung: HangingReceiver;
  let healthy: HangingReceiver;
  let hungHook: string;
  let healthyHook: string;

  const start = async (): Promise<void> => {
    broker = await startTestBroker({ servers: BOTH_SERVERS, clock, config: { ...keys, ...WEBHOOKS, storage } });
    admin = new ApiClient(broker.url('admin'));
  };
  const app = () => broker.broker.server('enduser').app;
  const worker = (): WebhookDeliveryWorker => app().get(WebhookDeliveryWorker);
  /** Another worker on the same database, as a replica's: it claims only when told to (`deliverNow`). */
  const replicaWorker = (): WebhookDeliveryWorker =>
    new WebhookDeliveryWorker(
      app().get<string, BrokerConfig>(BROKER_CONFIG),
      app().get(WebhookDeliveryRepository),
      app().get(WebhookSecrets),
      app().get(Clock),
      app().get(Random),
    );
  const record = async (type: EventType): Promise<string> => {
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
    await app()
      .get(EventRepository)
      .append([{ id, occurredAt: clock.now(), event }]);
    return id;
  };
  const subscribe = async (url: string, eventTypes: EventType[]): Promise<string> => {
    const created = await admin.post('/api/webhooks', { url, event_types: eventTypes, enabled: true });
    expect(created.status).toBe(201);
    return created.json<{ id: string }>().id;
  };
  const deliveries = async (webhookId: string): Promise<DeliveryAnswer[]> =>
    (await admin.get(`/api/webhooks/${webhookId}/deliveries`)).json<DeliveryAnswer[]>();
  const deliveryOf = async (webhookId: string, eventId: string): Promise<DeliveryAnswer | undefined> =>
    (await deliveries(webhookId)).find((d) => d.event_id === eventId);

  beforeAll(async () => {
    hung = await HangingReceiver.start();
    healthy = await HangingReceiver.start();
    if (backend.name === 'pglite') {
      dataDir = mkdtempSync(join(tmpdir(), 'webhook-delivery-'));
      storage = { backend: 'pglite', pglite: { data_dir: dataDir } };
    } else {
      storage = await backend.storage();
    }
    await start();
    hungHook = await subscribe(hung.url, ['agent.deleted']);
    healthyHook = await subscribe(healthy.url, ['agent.created']);
  });

  afterAll(async () => {
    await broker?.stop();
    await hung?.close();
    await healthy?.close();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers another webhook’s event at once while a hung receiver has a backlog, which holds at most per_webhook_concurrency (2) attempts', async () => {
    hung.holding = true;
    const backlog: string[] = [];
    for (let i = 0; i < 20; i += 1) backlog.push(await record('agent.deleted'));
    // The unrelated event comes after the backlog.
    clock.advance(1);
    const unrelated = await record('agent.created');
    const run = worker().deliverNow();

    await eventually(async () => (await deliveryOf(healthyHook, unrelated))?.status === 'delivered');
    expect(healthy.forEvent(unrelated)).toHaveLength(1);
    // The hung receiver's backlog is still waiting: only its own attempts are held.
    expect(hung.received.length).toBeLessThanOrEqual(2);
    expect((await deliveries(hungHook)).filter((d) => d.status === 'pending')).toHaveLength(backlog.length);

    hung.holding = false;
    hung.release();
    await run;
    for (const eventId of backlog) expect(hung.forEvent(eventId), eventId).toHaveLength(1);
    expect((await deliveries(hungHook)).filter((d) => d.status === 'delivered')).toHaveLength(backlog.length);
    expect(hung.maxOpen).toBe(2);
    expect(hung.overlaps).toEqual([]);
  }, 30_000);

  it('stops during a hung attempt without waiting for it, releases the claim uncounted, and delivers it once after a restart', async () => {
    hung.holding = true;
    const eventId = await record('agent.deleted');
    const run = worker().deliverNow();
    await eventually(() => hung.forEvent(eventId).length === 1);

    // Stopping the broker aborts the attempt (the attempt timeout is two minutes).
    await broker.stop();
    await run;
    await eventually(() => hung.forEvent(eventId)[0]?.ended === 'aborted');
    hung.holding = false;
    hung.release();

    await start();
    // Released: pending, the aborted attempt not counted, due at once.
    expect(await deliveryOf(hungHook, eventId)).toMatchObject({ status: 'pending', attempts: 0 });
    const [row] = await broker.broker.runtime.database.dataSource.query<{ claimed_until: Date | null }[]>(
      'SELECT claimed_until FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2',
      [hungHook, eventId],
    );
    expect(row?.claimed_until).toBeNull();
    await worker().deliverNow();
    expect(await deliveryOf(hungHook, eventId)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(hung.forEvent(eventId).map((hook) => hook.ended)).toEqual(['aborted', 'answered']);
  }, 30_000);

  it('never lets a second worker attempt a delivery while the first worker’s attempt of it is still running', async () => {
    // Two workers of this test's own on one database (as two replicas); the broker's stays out of the way.
    await worker().onModuleDestroy();
    const first = replicaWorker();
    const second = replicaWorker();
    hung.holding = true;
    const events: string[] = [];
    for (let i = 0; i < 6; i += 1) events.push(await record('agent.deleted'));
    const before = hung.received.length;

    const firstRun = first.deliverNow();
    await eventually(() => hung.open.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The attempts in flight end just before their lease would lapse; the first worker goes on with the next ones.
    clock.advance(LEASE_MS - 1_000);
    const answered = hung.received.length;
    hung.release();
    const delivered = async (): Promise<number> =>
      (await deliveries(hungHook)).filter((d) => events.includes(d.event_id) && d.status === 'delivered').length;
    await eventually(
      async () => (await delivered()) === answered - before && hung.received.length > answered && hung.open.length > 0,
    );
    // Past the lease of the first claim: the second worker looks for due deliveries.
    clock.advance(2_000);
    hung.holding = false;
    await second.deliverNow();
    hung.release();
    await firstRun;
    await second.deliverNow();

    expect(hung.overlaps).toEqual([]);
    for (const eventId of events) expect(hung.forEvent(eventId), eventId).toHaveLength(1);
    expect(hung.received.length - before).toBe(events.length);
    expect(first.totals.delivered + second.totals.delivered).toBe(events.length);
    await Promise.all([first.onModuleDestroy(), second.onModuleDestroy()]);
  }, 30_000);

  it('purges delivered and failed deliveries of events older than events.webhooks.delivery_retention (7 days), never pending ones', async () => {
    await worker().onModuleDestroy();
    const delivering = replicaWorker();
    const parked = await subscribe(healthy.url, ['agent.changed']);
    const firstId = await record('agent.created');
    const secondId = await record('agent.created');
    const pendingId = await record('agent.changed');
    // Never attempted: its webhook is disabled before any worker runs.
    expect(
      (await admin.put(`/api/webhooks/${parked}`, { url: healthy.url, event_types: ['agent.changed'], enabled: false }))
        .status,
    ).toBe(200);
    healthy.answers.push(200, 503);
    await delivering.deliverNow();
    healthy.answers.push(503);
    clock.advance(24 * 3_600_000);
    await delivering.deliverNow();
    // The receiver answers in the order attempts arrive, and the two deliveries (same due time) may arrive in either
    // order: one was delivered at once, the other failed twice.
    const finished = [await deliveryOf(healthyHook, firstId), await deliveryOf(healthyHook, secondId)];
    expect(finished.map((delivery) => delivery?.status).sort()).toEqual(['delivered', 'failed']);
    const recentId = await record('agent.created');
    await delivering.deliverNow();
    await delivering.onModuleDestroy();

    clock.advance(6 * 24 * 3_600_000 + 1);
    const retention = app().get(WebhookDeliveryRetention);
    expect(await retention.purgeNow()).toBeGreaterThanOrEqual(2);
    const rows = await broker.broker.runtime.database.dataSource.query<{ event_id: string; status: string }[]>(
      'SELECT event_id, status FROM webhook_deliveries WHERE event_id = ANY($1::uuid[])',
      [[firstId, secondId, pendingId, recentId]],
    );
    expect(rows.map((row) => row.event_id).sort()).toEqual([pendingId, recentId].sort());
    expect(await retention.purgeNow()).toBe(0);
  });
});
