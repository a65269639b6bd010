import { CryptoRandom } from '@broker/domain';
import { createLogger } from '@broker/http';
import { Database, EventRepository } from '@broker/persistence';
import { BrokerMetrics } from '@broker/telemetry';
import { FrozenClock, LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AnyBrokerEvent } from '../catalogue/event-catalogue';
import { EventLedger, type EventSettings } from './event-ledger';
import type { EventToAppend } from './event-store';

/** A real repository whose writes can be held (a slow database) or fail once (an outage). */
class HeldRepository extends EventRepository {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  failNext = false;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  override async append(
    events: readonly EventToAppend[],
    manager?: Parameters<EventRepository['append']>[1],
  ): Promise<void> {
    await this.gate;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database unavailable');
    }
    await super.append(events, manager);
  }
}

function exchanged(principal: string): AnyBrokerEvent {
  return {
    type: 'token.exchanged',
    actor: { type: 'gateway', id: 'gw' },
    principal,
    agentId: null,
    serviceId: null,
    outcome: 'success',
    traceId: null,
    details: { resource: 'https://mail.example.com', oauth_error: null },
  };
}

/** An authenticated gateway's refused exchange: kept in the ledger, but dropped before any issued one on overflow. */
function refused(principal: string): AnyBrokerEvent {
  return {
    type: 'token.exchanged',
    actor: { type: 'gateway', id: 'gw' },
    principal,
    agentId: null,
    serviceId: null,
    outcome: 'failure',
    traceId: null,
    details: { resource: 'https://mail.example.com', oauth_error: 'access_denied' },
  };
}

const settings = (queue: Partial<EventSettings['queue']>, enabled = true): EventSettings => ({
  enabled,
  queue: { max_events: 10_000, flush_interval: 3_600_000, batch_size: 500, ...queue },
});

async function counter(metrics: BrokerMetrics, name: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  return metric?.values[0]?.value ?? 0;
}

describe.each(testBackends())('EventLedger on $name', (backend) => {
  let database: Database;
  let repository: HeldRepository;
  let logs: LogCapture;
  const clock = new FrozenClock('2026-03-01T10:00:00Z');

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    logs = new LogCapture();
    database = await Database.open(config, createLogger(config, logs));
    repository = new HeldRepository(database.dataSource);
  });

  beforeEach(async () => {
    await database.dataSource.query('DELETE FROM events');
  });

  afterAll(async () => {
    await database?.close();
  });

  const principals = async (): Promise<string[]> =>
    (await database.dataSource.query<{ principal: string }[]>('SELECT principal FROM events ORDER BY seq')).map(
      (row) => row.principal,
    );

  function ledger(queue: Partial<EventSettings['queue']>, metrics?: BrokerMetrics, enabled = true): EventLedger {
    const created = new EventLedger(repository, settings(queue, enabled), createLogger(testConfig(), logs)).use(
      clock,
      new CryptoRandom(),
    );
    created.metrics = metrics;
    return created;
  }

  it('writes queued events in one batch on flush, stamped with the clock and a fresh id each', async () => {
    const queue = ledger({});
    for (const name of ['a', 'b', 'c']) queue.enqueue(exchanged(name));
    expect(await principals()).toEqual([]);
    expect(queue.queued).toBe(3);
    await queue.flush();
    expect(await principals()).toEqual(['a', 'b', 'c']);
    const rows = await database.dataSource.query<{ id: string; occurred_at: Date }[]>(
      'SELECT id, occurred_at FROM events',
    );
    expect(new Set(rows.map((row) => row.id)).size).toBe(3);
    expect(rows.every((row) => row.occurred_at.getTime() === clock.nowMs())).toBe(true);
  });

  it('starts a write as soon as batch_size events wait, without waiting for the interval', async () => {
    const metrics = new BrokerMetrics(true);
    const queue = ledger({ batch_size: 2 }, metrics);
    repository.hold();
    queue.enqueue(exchanged('a'));
    queue.enqueue(exchanged('b'));
    // The batch left the queue for the writer (held at the database).
    expect(queue.queued).toBe(0);
    repository.release();
    await queue.flush();
    expect(await principals()).toEqual(['a', 'b']);
    expect(await counter(metrics, 'broker_events_written_total')).toBe(2);
  });

  it('on overflow drops the oldest queued events, counts them and warns once; the caller never waits', async () => {
    const metrics = new BrokerMetrics(true);
    const queue = ledger({ max_events: 3, batch_size: 2 }, metrics);
    const warningsBefore = logs
      .records()
      .filter(
        (r) => r.msg === 'activity ledger: queue full, hot-path events dropped (refusals first, then the oldest)',
      ).length;
    repository.hold();
    // a and b go to the (blocked) writer; c..g queue behind it, bounded at 3: c and d are dropped.
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) queue.enqueue(exchanged(name));
    expect(queue.queued).toBe(3);
    expect(await counter(metrics, 'broker_events_dropped_total')).toBe(2);
    const warnings = logs
      .records()
      .filter(
        (r) => r.msg === 'activity ledger: queue full, hot-path events dropped (refusals first, then the oldest)',
      );
    expect(warnings.length - warningsBefore).toBe(1);
    repository.release();
    await queue.flush();
    expect(await principals()).toEqual(['a', 'b', 'e', 'f', 'g']);
  });

  it('on overflow drops refused requests’ events first (oldest first), issued ones only when no refusal is queued', async () => {
    const metrics = new BrokerMetrics(true);
    const queue = ledger({ max_events: 4 }, metrics);
    // Five events for four places: the oldest refusal goes, not the oldest event (s1).
    for (const event of [exchanged('s1'), refused('f1'), exchanged('s2'), refused('f2'), exchanged('s3')])
      queue.enqueue(event);
    expect(queue.queued).toBe(4);
    // A refusal arriving at a full queue displaces the oldest refusal, never an issued event.
    queue.enqueue(refused('f3'));
    // An issued event displaces the last refusal queued; the next refusal finds only issued events and is itself dropped.
    queue.enqueue(exchanged('s4'));
    queue.enqueue(refused('f4'));
    // Only issued events left: the oldest of them goes.
    queue.enqueue(exchanged('s5'));
    expect(queue.queued).toBe(4);
    expect(await counter(metrics, 'broker_events_dropped_total')).toBe(5);
    await queue.flush();
    expect(await principals()).toEqual(['s2', 's3', 's4', 's5']);
  });

  it('writes the events it kept in the order they happened, issued and refused interleaved', async () => {
    const queue = ledger({ max_events: 4, batch_size: 2 });
    repository.hold();
    // a and b go to the (held) writer; c..g queue behind it, bounded at 4: the oldest refusal (d) is dropped.
    for (const event of [
      exchanged('a'),
      refused('b'),
      exchanged('c'),
      refused('d'),
      exchanged('e'),
      refused('f'),
      exchanged('g'),
    ])
      queue.enqueue(event);
    repository.release();
    await queue.flush();
    expect(await principals()).toEqual(['a', 'b', 'c', 'e', 'f', 'g']);
  });

  it('keeps the events of a failed write for the next one, in order (still bounded)', async () => {
    const queue = ledger({});
    queue.enqueue(exchanged('a'));
    queue.enqueue(refused('b'));
    repository.failNext = true;
    await expect(queue.flush()).rejects.toThrow('database unavailable');
    expect(queue.queued).toBe(2);
    queue.enqueue(exchanged('c'));
    await queue.flush();
    expect(await principals()).toEqual(['a', 'b', 'c']);
  });

  it('drops only an event the database refuses (a poison event never holds the queue), counted and warned about', async () => {
    const metrics = new BrokerMetrics(true);
    const queue = ledger({}, metrics);
    queue.enqueue(exchanged('a'));
    // Not a UUID: the database refuses the row (SQLSTATE 22P02), as it would any data it cannot store.
    queue.enqueue({ ...exchanged('poison'), agentId: 'not-a-uuid' });
    queue.enqueue(exchanged('b'));
    await queue.flush();
    expect(await principals()).toEqual(['a', 'b']);
    expect(queue.queued).toBe(0);
    expect(await counter(metrics, 'broker_events_dropped_total')).toBe(1);
    expect(await counter(metrics, 'broker_events_written_total')).toBe(2);
    expect(
      logs
        .records()
        .some((r) => r.msg === 'activity ledger: an event the database refused was dropped' && r.sqlstate === '22P02'),
    ).toBe(true);
  });

  it('close writes what is queued and refuses later events', async () => {
    const queue = ledger({});
    queue.enqueue(exchanged('a'));
    await queue.close();
    queue.enqueue(exchanged('late'));
    expect(await principals()).toEqual(['a']);
    expect(queue.queued).toBe(0);
  });

  it('records a state change’s event in its transaction: rolled back with it, committed with it', async () => {
    const queue = ledger({});
    await expect(
      database.transaction(async (manager) => {
        await queue.record(exchanged('rolled-back'), manager);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await database.transaction((manager) => queue.record(exchanged('committed'), manager));
    expect(await principals()).toEqual(['committed']);
  });

  it('with events.enabled false records and queues nothing', async () => {
    const queue = ledger({}, undefined, false);
    queue.enqueue(exchanged('a'));
    await database.transaction((manager) => queue.record(exchanged('b'), manager));
    await queue.flush();
    expect(queue.queued).toBe(0);
    expect(await principals()).toEqual([]);
  });
});
