import type { BrokerConfig } from '@broker/config';
import { CryptoRandom, SystemClock, type Clock, type Random } from '@broker/domain';
import type { BrokerMetrics } from '@broker/telemetry';
import type { Logger } from 'pino';
import type { AnyBrokerEvent } from '../catalogue/event-catalogue';
import type { EventStore, EventToAppend } from './event-store';

export type EventSettings = Pick<BrokerConfig['events'], 'enabled' | 'queue'>;

/** PostgreSQL refused the data (class 22: data exception; 23: integrity), not the connection: retrying cannot help. */
function refusedData(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/** At most one overflow warning per this many milliseconds (a full queue would otherwise log per exchange). */
const WARN_EVERY_MS = 1_000;

/** A queued event and its place in the order events were queued (the lanes are merged by it when written). */
interface Queued extends EventToAppend {
  readonly order: number;
}

/** The refusals (`true`) or the issued events (`false`) of `entries`, in their order. */
function ofLane(entries: readonly Queued[], refusals: boolean): Queued[] {
  return entries.filter((entry) => (entry.event.outcome === 'failure') === refusals);
}

/**
 * The activity ledger's writer, one per process (the `Database` holds it).
 * State changes (grants, sessions, approvals, admin writes) `record` their event with the
 * caller's transaction manager, so a committed change always has its event and a rolled-back
 * one never does. The hot path (token exchange, impersonation) `enqueue`s: a bounded
 * in-memory queue that one flusher writes with multi-row INSERTs every `flush_interval`, or
 * as soon as `batch_size` events wait. A failed write keeps its events for the next tick
 * (still bounded). Only requests that authenticated a gateway queue an event (docs/events.md), so every queued event is a real one; on overflow the queue drops,
 * in this order, the oldest refused requests' events (`outcome: failure`), then, only when
 * none is queued, the oldest issued ones: a flood of refusals can never push out a record of
 * a token that was handed out. Drops are counted (`broker_events_dropped_total`, one warning
 * per second at most): a slow ledger never blocks or fails a token exchange. What is kept is
 * written in the order it was queued. `close` flushes what is queued (clean shutdown).
 * With `events.enabled: false` both do nothing.
 */
export class EventLedger {
  /** Set at boot by the database's owner (`Database.instrument`). */
  metrics: BrokerMetrics | undefined;
  private clock: Clock = new SystemClock();
  private random: Random = new CryptoRandom();
  /** Issued (`success`) events, oldest first: dropped only when no refusal is queued. */
  private readonly issued: Queued[] = [];
  /** Refused requests' (`failure`) events, oldest first: dropped first on overflow. */
  private readonly refusals: Queued[] = [];
  /** The next queued event's `order`. */
  private order = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The write in progress (one flusher: writes never overlap). */
  private writing: Promise<void> | undefined;
  private droppedSinceWarning = 0;
  private lastWarningAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly repository: EventStore,
    private readonly settings: EventSettings,
    private readonly logger: Logger,
  ) {}

  /** The runtime's clock and randomness (event time and id): bound by the persistence module's provider. */
  use(clock: Clock, random: Random): this {
    this.clock = clock;
    this.random = random;
    return this;
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** Events waiting in the hot-path queue. */
  get queued(): number {
    return this.issued.length + this.refusals.length;
  }

  /**
   * Appends a state change's event in the caller's transaction (`transaction`, the manager a
   * repository hands its `WithinTransaction` work): it commits or rolls back with the change.
   * Without a transaction (PGlite's refresh lock), pass the manager the change was written
   * with: the event is written right after it.
   */
  async record(event: AnyBrokerEvent, transaction: unknown): Promise<void> {
    if (!this.settings.enabled) return;
    await this.repository.append([this.stamp(event)], transaction);
  }

  /** The hot path: queues the event and returns at once (never throws, never waits for the database). */
  enqueue(event: AnyBrokerEvent): void {
    if (!this.settings.enabled || this.closed) return;
    (event.outcome === 'failure' ? this.refusals : this.issued).push({
      id: this.random.uuid(),
      occurredAt: this.clock.now(),
      event,
      order: this.order++,
    });
    this.trim();
    if (this.queued >= this.settings.queue.batch_size && this.writing === undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.tick();
    } else {
      this.arm();
    }
  }

  /** Writes everything queued now (after the write in progress); throws when a write fails (the events stay queued). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing !== undefined) await this.writing;
    while (this.queued > 0) {
      const written = this.writeBatch();
      this.writing = written.then(
        () => undefined,
        () => undefined,
      );
      try {
        await written;
      } finally {
        this.writing = undefined;
      }
    }
  }

  /** Clean shutdown (before the data source closes): no more queueing, and what is queued is written. */
  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.flush();
    } catch (error) {
      this.logger.warn(
        { lost: this.queued, error: (error as Error).message },
        'activity ledger: the queued events could not be written at shutdown',
      );
    }
  }

  private stamp(event: AnyBrokerEvent): EventToAppend {
    return { id: this.random.uuid(), occurredAt: this.clock.now(), event };
  }

  /**
   * Drops the events beyond `max_events`: the oldest refusals first, then the oldest issued
   * events; counted, with at most one warning per second.
   */
  private trim(): void {
    const excess = this.queued - this.settings.queue.max_events;
    if (excess <= 0) return;
    // One at a time (usually exactly one): `shift` drops the head in place, where `splice` copies the queue.
    for (let left = excess; left > 0; left -= 1) (this.refusals.length > 0 ? this.refusals : this.issued).shift();
    this.metrics?.eventsDropped(excess);
    this.droppedSinceWarning += excess;
    const now = performance.now();
    if (now - this.lastWarningAt < WARN_EVERY_MS) return;
    this.logger.warn(
      { dropped: this.droppedSinceWarning, max_events: this.settings.queue.max_events },
      'activity ledger: queue full, hot-path events dropped (refusals first, then the oldest)',
    );
    this.lastWarningAt = now;
    this.droppedSinceWarning = 0;
  }

  private arm(): void {
    if (this.timer !== undefined || this.writing !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, this.settings.queue.flush_interval);
    this.timer.unref();
  }

  /** One flusher run: a batch, then more while full batches wait; the rest waits for the next tick. Never rejects. */
  private async tick(): Promise<void> {
    if (this.writing !== undefined) return;
    let release!: () => void;
    this.writing = new Promise((resolve) => (release = resolve));
    try {
      do {
        await this.writeBatch();
      } while (this.queued >= this.settings.queue.batch_size && !this.closed);
    } catch (error) {
      // The message only: the statement's parameters are the events (credential-free, but bulky).
      this.logger.warn(
        { queued: this.queued, error: (error as Error).message },
        'activity ledger: writing queued events failed; retrying on the next tick',
      );
    } finally {
      this.writing = undefined;
      release();
      if (this.queued > 0) this.arm();
    }
  }

  /**
   * Writes the oldest `batch_size` queued events. When the database refuses the data itself
   * (SQLSTATE class 22/23: one event it cannot store), the batch is written event by event
   * and only the refused ones are dropped, counted and warned about, so one bad event never
   * holds the queue; any other failure (the database unavailable) puts the batch back at the
   * front of the queue for the next tick (still bounded).
   */
  private async writeBatch(): Promise<void> {
    const batch = this.oldest(this.settings.queue.batch_size);
    if (batch.length === 0) return;
    try {
      await this.repository.append(batch);
    } catch (error) {
      if (!refusedData(error)) {
        this.putBack(batch);
        this.trim();
        throw error;
      }
      await this.writeOneByOne(batch);
      return;
    }
    this.metrics?.eventsWritten(batch.length);
  }

  /** Takes the `count` oldest queued events out of both lanes, in the order they were queued. */
  private oldest(count: number): Queued[] {
    const batch: Queued[] = [];
    let issued = 0;
    let refusals = 0;
    while (batch.length < count) {
      const nextIssued = this.issued[issued];
      const nextRefusal = this.refusals[refusals];
      if (nextIssued === undefined && nextRefusal === undefined) break;
      if (nextRefusal === undefined || (nextIssued !== undefined && nextIssued.order < nextRefusal.order)) {
        batch.push(nextIssued as Queued);
        issued += 1;
      } else {
        batch.push(nextRefusal);
        refusals += 1;
      }
    }
    this.issued.splice(0, issued);
    this.refusals.splice(0, refusals);
    return batch;
  }

  /** Puts events taken by `oldest` back at the front of their lanes (older than anything queued since). */
  private putBack(entries: readonly Queued[]): void {
    this.issued.unshift(...ofLane(entries, false));
    this.refusals.unshift(...ofLane(entries, true));
  }

  private async writeOneByOne(batch: readonly Queued[]): Promise<void> {
    let written = 0;
    for (const [index, entry] of batch.entries()) {
      try {
        await this.repository.append([entry]);
        written += 1;
      } catch (error) {
        if (!refusedData(error)) {
          this.putBack(batch.slice(index));
          this.trim();
          this.metrics?.eventsWritten(written);
          throw error;
        }
        this.metrics?.eventsDropped(1);
        this.logger.warn(
          { type: entry.event.type, sqlstate: (error as { code?: string }).code },
          'activity ledger: an event the database refused was dropped',
        );
      }
    }
    this.metrics?.eventsWritten(written);
  }
}
