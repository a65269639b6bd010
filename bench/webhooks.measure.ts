import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { type AnyBrokerEvent } from '@broker/events';
import { EventRepository } from '@broker/persistence';
import {
  ApiClient,
  createPostgresDatabase,
  startPostgresCluster,
  startTestBroker,
  testKey,
  type PostgresCluster,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { BOTH_SERVERS } from '../test/support/servers';
import { HangingReceiver } from '../test/support/webhook-receiver';
import { EXCHANGE_FORM, FORM_HEADERS, QUICK } from './load';
import { takeMachine } from './machine-lock';

/**
 * Webhook delivery under a hung receiver (README "Webhooks"), on a throwaway PostgreSQL
 * cluster with the default webhook settings (5 s timeout, 8 attempts per process, 2 per
 * webhook): one webhook's receiver accepts connections and never answers; another,
 * healthy receiver is subscribed to `agent.created`. Measured: how long after the admin
 * API answers the creation of an agent its `agent.created` reaches the healthy receiver,
 * (1) after 10,000 unauthenticated token exchanges (whatever they record goes to the hung
 * webhook, subscribed to `token.exchanged`), and (2) with 10,000 deliveries queued for the
 * hung receiver directly (events appended through the ledger's repository), so the backlog
 * is there whatever produces it. Target: within one poll interval (1 s) plus the delivery's
 * own time. Prints numbers; asserts nothing. BENCH_QUICK=1 shortens it (smoke only).
 */
const FLOOD = QUICK ? 1_000 : 10_000;
const SAMPLES = QUICK ? 2 : 5;
/** A delivery not there after this long is reported as not delivered (the old single queue took hours). */
const GIVE_UP_MS = 120_000;
const CONNECTIONS = 50;

describe('webhook delivery with a hung receiver (PostgreSQL)', () => {
  let release: (() => void) | undefined;
  let cluster: PostgresCluster | undefined;
  let broker: TestBroker;
  let admin: ApiClient;
  let hung: HangingReceiver;
  let healthy: HangingReceiver;
  let hungHook: string;

  beforeAll(async () => {
    release = await takeMachine();
    cluster = await startPostgresCluster();
    if (cluster === undefined) throw new Error('the webhook benchmark needs PostgreSQL (initdb/pg_ctl)');
    hung = await HangingReceiver.start();
    hung.holding = true;
    healthy = await HangingReceiver.start();
    const storage = { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase(cluster.url) } };
    const keys = {
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    };
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: { ...keys, storage, events: { webhooks: { allowed_networks: ['127.0.0.0/8'] } }, log: { level: 'warn' } },
    });
    admin = new ApiClient(broker.url('admin'));
    hungHook = (
      await admin.post('/api/webhooks', {
        url: hung.url,
        event_types: ['token.exchanged', 'agent.deleted'],
        enabled: true,
      })
    ).json<{ id: string }>().id;
    await admin.post('/api/webhooks', { url: healthy.url, event_types: ['agent.created'], enabled: true });
    console.log(
      `machine: node ${process.version}, os.cpus().length = ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; webhook settings: defaults (timeout 5 s, concurrency 8, per_webhook_concurrency 2, poll 1 s)`,
    );
  }, 300_000);

  afterAll(async () => {
    await broker?.stop();
    await hung?.close();
    await healthy?.close();
    cluster?.stop();
    release?.();
  });

  const pendingForHung = async (): Promise<number> => {
    const [row] = await broker.broker.runtime.database.dataSource.query<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'",
      [hungHook],
    );
    return row?.n ?? 0;
  };

  /** Creates an agent and waits for its `agent.created` at the healthy receiver: milliseconds after the API answered, or null. */
  const unrelatedDelay = async (): Promise<number | null> => {
    const seen = healthy.received.length;
    const created = await admin.post('/api/agents', {
      display_name: `bench-${randomUUID()}`,
      redirect_uris: ['https://a.example.com/cb'],
      permission_sets: [],
    });
    if (created.status !== 201) throw new Error(`agent creation answered ${created.status}`);
    const answered = performance.now();
    while (healthy.received.length === seen) {
      if (performance.now() - answered > GIVE_UP_MS) return null;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return performance.now() - answered;
  };

  const report = async (scenario: string, backlog: string): Promise<Record<string, string | number>> => {
    const delays: (number | null)[] = [];
    for (let i = 0; i < SAMPLES; i += 1) delays.push(await unrelatedDelay());
    const done = delays.filter((d): d is number => d !== null).sort((a, b) => a - b);
    const show = (d: number | undefined): string =>
      d === undefined ? `> ${GIVE_UP_MS / 1000} s` : `${Math.round(d)} ms`;
    return {
      scenario,
      backlog,
      'pending for the hung receiver': await pendingForHung(),
      'attempts open at the hung receiver': hung.open.length,
      samples: SAMPLES,
      'unrelated delivery delay p50': show(done.length === SAMPLES ? done[Math.floor(SAMPLES / 2)] : undefined),
      max: show(done.length === SAMPLES ? done[SAMPLES - 1] : undefined),
    };
  };

  it('the delay of an unrelated agent.created delivery while one receiver never answers', async () => {
    const rows: Record<string, string | number>[] = [];
    rows.push(await report('0. baseline', 'none'));

    // 1. Unauthenticated token exchanges: never-valid assertions, CONNECTIONS at a time.
    const body = `${EXCHANGE_FORM}&client_assertion=eyJhbGciOiJub25lIn0.e30.&subject_token=eyJhbGciOiJub25lIn0.e30.`;
    let sent = 0;
    const statuses = new Map<number, number>();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (sent < FLOOD) {
          sent += 1;
          const response = await fetch(`${broker.url('enduser')}/oauth2/token`, {
            method: 'POST',
            headers: FORM_HEADERS,
            body,
          });
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    console.log(
      `${FLOOD.toLocaleString('en-US')} unauthenticated token exchanges in ${((performance.now() - started) / 1000).toFixed(1)} s, answered ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    // The hot path's queue reaches the table (250 ms).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    rows.push(
      await report(`1. after ${FLOOD.toLocaleString('en-US')} unauthenticated exchanges`, 'what they recorded'),
    );

    // 2. The backlog queued directly: events appended through the ledger's repository, one delivery each for the hung webhook.
    const events = broker.broker.server('enduser').app.get(EventRepository);
    for (let first = 0; first < FLOOD; first += 500) {
      const batch = Array.from({ length: Math.min(500, FLOOD - first) }, () => {
        const event = {
          type: 'agent.deleted',
          actor: { type: 'admin', id: 'bench@example.com' },
          principal: null,
          agentId: randomUUID(),
          serviceId: null,
          outcome: 'success',
          traceId: null,
          details: {},
        } as AnyBrokerEvent;
        return { id: randomUUID(), occurredAt: new Date(), event };
      });
      await events.append(batch);
    }
    rows.push(
      await report(
        `2. ${FLOOD.toLocaleString('en-US')} deliveries queued for the hung receiver`,
        `${FLOOD.toLocaleString('en-US')} agent.deleted`,
      ),
    );
    console.log(
      `\nwebhooks: an unrelated delivery's delay with one receiver that never answers${QUICK ? ' (BENCH_QUICK: smoke, not a result)' : ''}`,
    );
    console.table(rows);
  }, 1_800_000);
});
